/* gemm_in_context.c - TEST-ONLY (`make gemm-in-context`): why a small GEMM reaches less of the provider's rate
 * inside a lesson than alone. Lesson 2's forward is one [n, c] x [c, c] product per chain step between two row
 * passes (max and exp before it, log after it); GEMM_CPU_PROFILE=1 times each product inside the layer with two
 * reads of the process CPU clock and compares the sum with the same shape replayed alone. This program times
 * the same product through the same layer (sgemm_cpu, the provider it chose) five ways, in CPU time, one thread:
 *   alone            the same operands call after call, the loop timed whole (the replay's conditions)
 *   alone, clocked   the same, each call between two CPU-clock reads (what the profile adds to every call)
 *   P walks          each step its own P_i of the chain (a [v-1, c, c] array), the loop timed whole
 *   in the lesson    row passes between the products, each product clocked as the profile does
 *   P prefetched     the same, with P_i prefetched during the row pass before its product
 * and prints each as microseconds per product and as a share of "alone"; then the whole step (row pass, product,
 * row pass) of the last two, which says whether the prefetch saved time or only moved it into the row pass.
 *     build/gemm_in_context [n c]      (default 100 100: lesson 2's medium size) */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gemm_cpu.h"

enum { STEPS = 39, REPS = 40 }; /* lesson 2 medium: v = 40, so 39 products per pass */

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void product(size_t n, size_t c, const float *W, const float *P, float *S)
{
    sgemm_cpu(0, 0, n, c, c, 1.0f, W, c, P, c, 0.0f, S, c); /* S (n, c) = W (n, c) . P (c, c) */
}

/* Prefetch slice `part` of `parts` of [p, p + bytes) into the cache, 64-byte lines: one call per row of a row pass
 * spreads a matrix's prefetches over the pass. */
static void prefetch_slice(const void *p, size_t bytes, size_t part, size_t parts)
{
    size_t lines = (bytes + 63) / 64, per = (lines + parts - 1) / parts;
    for (size_t l = part * per; l < (part + 1) * per && l < lines; l++)
        __builtin_prefetch((const char *)p + 64 * l, 0, 3);
}

/* REPS passes of lesson 2's chain: per step W = exp(alpha_i - max) row by row (prefetching P_i meanwhile when
 * asked), S = W . P_i, alpha_{i+1} = log S. Adds the products' own CPU time to *gemm_s and
 * returns the whole loop's. */
static double lesson_steps(size_t n, size_t c, const float *P, float *alpha, float *W, float *S, int prefetch,
                           double *gemm_s)
{
    double t0 = cpu_now();
    for (size_t r = 0; r < REPS; r++)
        for (size_t i = 0; i < STEPS; i++) {
            for (size_t b = 0; b < n; b++) {
                if (prefetch) prefetch_slice(P + i * c * c, c * c * sizeof *P, b, n);
                const float *a = alpha + (b * (STEPS + 1) + i) * c;
                float m = a[0];
                for (size_t j = 1; j < c; j++) m = a[j] > m ? a[j] : m;
                for (size_t j = 0; j < c; j++) W[b * c + j] = expf(a[j] - m);
            }
            double g0 = cpu_now();
            product(n, c, W, P + i * c * c, S);
            *gemm_s += cpu_now() - g0;
            for (size_t b = 0; b < n; b++)
                for (size_t j = 0; j < c; j++)
                    alpha[(b * (STEPS + 1) + i + 1) * c + j] = logf(S[b * c + j] + 1e-30f) - 0.01f;
        }
    return cpu_now() - t0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 2 ? (size_t)atol(argv[1]) : 100, c = argc > 2 ? (size_t)atol(argv[2]) : 100;
    if (n == 0 || c == 0 || n > 4096 || c > 4096) {
        fprintf(stderr, "usage: %s [n c] (1 .. 4096 each)\n", argv[0]);
        return 2;
    }
    /* test scratch, not a lesson's memory: plain malloc */
    float *P = malloc(STEPS * c * c * sizeof *P), *alpha = malloc(n * (STEPS + 1) * c * sizeof *alpha);
    float *W = malloc(n * c * sizeof *W), *S = malloc(n * c * sizeof *S);
    if (!P || !alpha || !W || !S) {
        fprintf(stderr, "gemm_in_context: out of memory\n");
        return 3;
    }
    for (size_t i = 0; i < STEPS * c * c; i++) P[i] = (float)((i * 7) % 13) / 13.0f;
    for (size_t i = 0; i < n * (STEPS + 1) * c; i++) alpha[i] = -(float)(i % 17) / 17.0f;
    for (size_t i = 0; i < n * c; i++) W[i] = 0.5f;
    product(n, c, W, P, S); /* the provider chosen and warm */
    size_t calls = (size_t)STEPS * REPS;

    double t0 = cpu_now();
    for (size_t k = 0; k < calls; k++) product(n, c, W, P, S);
    double alone = (cpu_now() - t0) / (double)calls;

    double clocked = 0.0;
    for (size_t k = 0; k < calls; k++) {
        double g0 = cpu_now();
        product(n, c, W, P, S);
        clocked += cpu_now() - g0;
    }
    clocked /= (double)calls;

    t0 = cpu_now();
    for (size_t k = 0; k < calls; k++) product(n, c, W, P + (k % STEPS) * c * c, S);
    double walks = (cpu_now() - t0) / (double)calls;

    double lesson = 0.0, fetched = 0.0;
    double lesson_step = lesson_steps(n, c, P, alpha, W, S, 0, &lesson) / (double)calls;
    double fetched_step = lesson_steps(n, c, P, alpha, W, S, 1, &fetched) / (double)calls;
    lesson /= (double)calls;
    fetched /= (double)calls;

    double flop = 2.0 * (double)n * (double)c * (double)c;
    printf("gemm_in_context: [%zu, %zu] x [%zu, %zu] on %s through the layer (%s), %zu products each, CPU time per "
           "product:\n", n, c, c, c, gemm_cpu_provider_name(n, c, c), gemm_cpu_library(), calls);
    const char *name[] = {"alone", "alone, clocked", "P walks", "in the lesson", "P prefetched"};
    double us[] = {alone, clocked, walks, lesson, fetched};
    for (int i = 0; i < 5; i++)
        printf("  %-15s %8.1f us  %6.1f GFLOP/s  %4.0f%% of alone\n", name[i], 1e6 * us[i], flop / us[i] / 1e9,
               100.0 * alone / us[i]);
    printf("  a whole step (row pass, product, row pass): %.1f us in the lesson, %.1f us with P prefetched\n",
           1e6 * lesson_step, 1e6 * fetched_step);
    free(P);
    free(alpha);
    free(W);
    free(S);
    return 0;
}
