/* run_estimate.c - a host implementation's time, measured on a smaller problem (run_estimate.h). */
#include "run_estimate.h"

#include "gemm_cpu.h"
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The largest share of the real run's multiply-adds a measurement may take: past it, the estimate would cost
 * about as much as being told nothing (lesson 5's cpu at small: one 128-row block is half the problem). */
#define MAX_SHARE 0.25
/* The smallest share a measurement stops at unless it already took 10x CALIBRATION_MS: below it a run's fixed
 * costs (lesson 4 at T=1: several times the time per step of T=8) inflate the estimate. */
#define MIN_SHARE (1.0 / 32.0)

/* One run of impl (or, with reference set, of the float64 reference) on the problem whose first dimension is
 * d0; its ms and impl's work there, or -1 when it cannot be built or would do more than max_work
 * multiply-adds (then it is no cheap measurement). */
static double run_small(const lesson *L, const void *prob, const long long *dims, const long long *opts,
                        uint64_t seed, int impl, int reference, long long d0, double max_work, double *work,
                        char *dims_text, size_t len)
{
    const lesson_impl *im = &L->impls[impl];
    long long sd[LESSON_MAX_DIMS], so[LESSON_MAX_OPTS];
    memcpy(sd, dims, sizeof sd);
    memcpy(so, opts, sizeof so);
    sd[0] = d0;
    if (L->calibrate) L->calibrate(prob, sd, so);
    if (sd[0] >= dims[0]) return -1.0; /* not smaller: the real run is its own measurement */
    lesson_problem small;
    if (L->make_problem(sd, so, &small) != NULL || (im->unfit && im->unfit(&small))) return -1.0;
    if (reference && L->reference_unfit && L->reference_unfit(&small)) return -1.0;
    *work = im->work(&small);
    if (!(*work > 0.0) || *work > max_work) return -1.0;
    snprintf(dims_text, len, "%s=%lld", L->dim_names[0], sd[0]);
    void *t[LESSON_MAX_TENSORS];
    double ms;
    lesson_make_inputs(L, &small, seed, t);
    if (reference) {
        double *ref[LESSON_MAX_TENSORS], t0 = host_time_ms();
        const char *why = lesson_make_reference(L, &small, t, ref);
        ms = why ? -1.0 : host_time_ms() - t0;
        lesson_free_ref(L, ref);
    } else {
        lesson_result res;
        lesson_run_impl(L, &small, impl, t, &res);
        ms = res.row.forward_ms + res.row.backward_ms;
        lesson_result_free(L, &res);
    }
    lesson_free_slots(L, t);
    return ms;
}

double run_estimate_seconds(const lesson *L, const void *prob, const long long *dims, const long long *opts,
                            uint64_t seed, int impl, int reference, char *how, size_t len)
{
    const lesson_impl *im = &L->impls[impl];
    double work = im->work(prob);
    /* the first cut: a few ms at GEMM speed (most implementations reach 2% to 100% of it) */
    double fraction = 2e-3 * gemm_cpu_fmas_per_second() / work;
    for (;;) {
        long long d0 = (long long)ceil((double)dims[0] * fraction);
        if (d0 < 1) d0 = 1;
        double small_work, ms;
        char at[64];
        ms = run_small(L, prob, dims, opts, seed, impl, reference, d0, MAX_SHARE * work, &small_work, at,
                       sizeof at);
        if (ms < 0.0) return -1.0;
        double share = small_work / work;
        if ((ms >= CALIBRATION_MS && share >= MIN_SHARE) || ms >= 10.0 * CALIBRATION_MS ||
            share * 8.0 > MAX_SHARE) {
            snprintf(how, len, "measured here: %s, %.2g of the multiply-adds, took %.0f ms", at, share, ms);
            return ms * 1e-3 / share;
        }
        fraction = fmax(8.0 * (double)d0 / (double)dims[0], MIN_SHARE);
    }
}
