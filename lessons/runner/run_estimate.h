/* run_estimate.h - how long a host implementation will take here, measured before it runs, so that a run of
 * 2 s or more says so first (the progress notice) with a figure that holds.
 *
 * The measured rate: the implementation runs once on a smaller problem of the same shape - the lesson's first
 * dimension cut (B, n, I, T, N: every lesson's work is linear in it), lesson.calibrate pinning whatever else
 * must stay fixed (lesson 5's chunk) - and its seconds per multiply-add (its work function) scale to the real
 * problem. The float64 reference (validation, after the runs) is measured the same way. The cut grows 8x at a
 * time until the small run takes CALIBRATION_MS and 1/32 of the multiply-adds (run_estimate.c: MIN_SHARE,
 * below which fixed costs mislead), so the estimate costs a few percent of the run, and never more than a
 * quarter of its multiply-adds (MAX_SHARE). In gdb, a breakpoint in such an implementation is first hit by
 * that smaller run (its first dimension says which); lesson_main.c measures only runs that could take 2 s, so
 * small sizes never are. A GEMM-rate floor alone misled: lesson 5's naive reaches 9% of GEMM speed and ran
 * ~10 s unannounced. */
#ifndef LESSONS_RUN_ESTIMATE_H
#define LESSONS_RUN_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "lesson.h"

#define CALIBRATION_MS 40.0

/* Seconds one forward + backward of host implementation impl will take on prob (built from dims and opts) -
 * or, with reference set, the float64 reference (validation; impl's work function then scales it) - measured
 * on a smaller problem; fills how ("measured here: B=..., a share of the multiply-adds, took ... ms").
 * Returns a negative number when no smaller problem can be built (the lesson rejects it, or the cut is not
 * smaller). */
double run_estimate_seconds(const lesson *L, const void *prob, const long long *dims, const long long *opts,
                            uint64_t seed, int impl, int reference, char *how, size_t len);

#endif
