/* run_estimate.h - how long a host implementation will take here, measured before it runs, so that a run of
 * 2 s or more says so first (the progress notice) with a figure that holds.
 *
 * The measured rate: the implementation runs once on a smaller problem of the same shape - the lesson's first
 * dimension cut (B, n, I, T, N: every lesson's work is linear in it), lesson.calibrate pinning whatever else
 * must stay fixed (lesson 5's chunk) - and its seconds per multiply-add (its work function) scale to the real
 * problem. The cut grows 8x at a time until the small run takes CALIBRATION_MS, so the estimate costs about
 * that much, and never more than a quarter of the real run's multiply-adds (run_estimate.c: MAX_SHARE). A GEMM-rate floor alone misled: lesson 5's naive reaches 9% of GEMM speed and ran ~10 s unannounced. */
#ifndef LESSONS_RUN_ESTIMATE_H
#define LESSONS_RUN_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "lesson.h"

#define CALIBRATION_MS 40.0

/* Seconds one forward + backward of implementation impl will take on prob (built from dims and opts), measured
 * on a smaller problem; fills how ("measured at B=512: 1/16 of the multiply-adds in 0.12 s"). Returns a
 * negative number when no smaller problem can be built (the lesson rejects it, or the cut is not smaller). */
double run_estimate_seconds(const lesson *L, const void *prob, const long long *dims, const long long *opts,
                            uint64_t seed, int impl, char *how, size_t len);

#endif
