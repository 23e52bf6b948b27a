/* maxsim_reference.c - float64 MaxSim and its gradients, scores by cblas_dgemm per block of rows (see
 * maxsim_reference.h). */
#include "maxsim_reference.h"

#include "rng.h"
#include "blas_reference.h"

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

/* Rows of a per block: the block's scores (rows, M*N) in double stay at most MS_REF_SCORE_BYTES. */
#define MS_REF_SCORE_BYTES ((size_t)32 << 20)

static size_t block_rows(const ms_dims *d)
{
    size_t per_row = size_mul(size_mul(d->M, d->N), sizeof(double)), rows = MS_REF_SCORE_BYTES / per_row;
    return rows ? rows : 1;
}

/* scores (rows, M*N) = a[r0 : r0+rows] (rows, K) . b^T (K, M*N); b stored (M*N, K): transB. Exact on the
 * grid. */
static void block_scores(const ms_dims *d, const double *ad, const double *bd, size_t r0, size_t rows,
                         double *scores)
{
    size_t K = d->K, MN = size_mul(d->M, d->N);
    ref_dgemm(REF_N, REF_T, rows, MN, K, ad + r0 * K, K, bd, K, 0.0, scores, MN);
}

/* argmax over n of one (row, m) segment s (N,) by the lesson's rule (ms_better: a NaN wins, then the lowest
 * n) */
static size_t first_argmax(const double *s, size_t N)
{
    size_t arg = 0;
    for (size_t n = 1; n < N; n++)
        if (ms_better(s[n], (long long)n, s[arg], (long long)arg)) arg = n;
    return arg;
}

/* Row r's maxima: out[i, m] += best, and with dout the one term's gradients da[r] += w b[m, n], db[m, n] += w
 * a[r] */
static void row_maxima(const ms_dims *d, const float *a, const float *b, const float *dout, size_t r,
                       const double *srow, double *out, double *da, double *db)
{
    size_t M = d->M, N = d->N, K = d->K, i = r / d->J;
    for (size_t m = 0; m < M; m++) {
        size_t n = first_argmax(srow + m * N, N);
        out[i * M + m] += srow[m * N + n];
        if (!dout) continue;
        double w = dout[i * M + m];
        const float *bn = b + (m * N + n) * K, *ar = a + r * K;
        double *dbn = db + (m * N + n) * K;
        for (size_t k = 0; k < K; k++) {
            da[r * K + k] += w * bn[k];
            dbn[k] += w * ar[k];
        }
    }
}

void ms_reference(const ms_dims *d, const float *a, const float *b, const float *dout, double *out,
                  double *da, double *db)
{
    size_t R = ms_rows(d), rb = block_rows(d);
    memset(out, 0, ms_out_count(d) * sizeof(double));
    if (dout) {
        memset(da, 0, ms_a_count(d) * sizeof(double));
        memset(db, 0, ms_b_count(d) * sizeof(double));
    }
    double *ad = ref_f64_copy(a, ms_a_count(d), 0, "reference: a (I*J,K) f64");
    double *bd = ref_f64_copy(b, ms_b_count(d), 0, "reference: b (M*N,K) f64");
    double *scores =
        host_alloc_array(size_mul(rb, size_mul(d->M, d->N)), DT_F64, "reference: scores (rows,M*N) f64");
    for (size_t r0 = 0; r0 < R; r0 += rb) {
        size_t rows = R - r0 < rb ? R - r0 : rb;
        block_scores(d, ad, bd, r0, rows, scores);
        for (size_t r = 0; r < rows; r++)
            row_maxima(d, a, b, dout, r0 + r, scores + r * d->M * d->N, out, da, db);
    }
    host_free(ad);
    host_free(bd);
    host_free(scores);
}
