/* maxsim_reference.c - float64 MaxSim and its gradients, one (i, j, m) at a time (see maxsim_reference.h). */
#include "maxsim_reference.h"

#include "../kernels/maxsim_math.h"
#include "../kernels/runtime/rng.h"

#include <string.h>

void ms_fill_inputs(const ms_dims *d, uint64_t seed, float *a, float *b, float *dout)
{
    rng r;
    rng_seed(&r, seed);
    for (size_t e = 0; e < ms_a_count(d); e++)
        a[e] = (float)((int)(rng_u64(&r) % (2 * MS_GRID_STEPS + 1)) - MS_GRID_STEPS) / MS_GRID_STEPS;
    for (size_t e = 0; e < ms_b_count(d); e++)
        b[e] = (float)((int)(rng_u64(&r) % (2 * MS_GRID_STEPS + 1)) - MS_GRID_STEPS) / MS_GRID_STEPS;
    rng_fill_normal_f32(&r, dout, ms_out_count(d), 0.0f, 1.0f);
}

/* <x, y> in double; four partial sums keep the dependency chain short (the values are exact anyway). */
static double dot64(const float *x, const float *y, size_t K)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    for (; k + 4 <= K; k += 4) {
        s0 += (double)x[k] * y[k];
        s1 += (double)x[k + 1] * y[k + 1];
        s2 += (double)x[k + 2] * y[k + 2];
        s3 += (double)x[k + 3] * y[k + 3];
    }
    for (; k < K; k++) s0 += (double)x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

/* argmax over n of <a row r, b[m, n]> by the lesson's rule (ms_better: a NaN wins, then the lowest n). */
static size_t argmax64(const ms_dims *d, const float *ar, const float *bm, double *best)
{
    size_t arg = 0;
    double v = dot64(ar, bm, d->K);
    for (size_t n = 1; n < d->N; n++) {
        double s = dot64(ar, bm + n * d->K, d->K);
        if (ms_better(s, (long long)n, v, (long long)arg)) {
            v = s;
            arg = n;
        }
    }
    *best = v;
    return arg;
}

void ms_reference(const ms_dims *d, const float *a, const float *b, const float *dout, double *out, double *da,
                  double *db)
{
    size_t R = ms_rows(d), J = d->J, M = d->M, N = d->N, K = d->K;
    memset(out, 0, ms_out_count(d) * sizeof(double));
    if (dout) {
        memset(da, 0, ms_a_count(d) * sizeof(double));
        memset(db, 0, ms_b_count(d) * sizeof(double));
    }
    for (size_t r = 0; r < R; r++)
        for (size_t m = 0; m < M; m++) {
            double best;
            size_t n = argmax64(d, a + r * K, b + m * N * K, &best);
            size_t i = r / J;
            out[i * M + m] += best;
            if (!dout) continue;
            double w = dout[i * M + m];
            for (size_t k = 0; k < K; k++) {
                da[r * K + k] += w * b[(m * N + n) * K + k];
                db[(m * N + n) * K + k] += w * a[r * K + k];
            }
        }
}
