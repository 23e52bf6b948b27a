/* maxsim_einsum.c - the forum's 4-D einsum and autograd's backward for it, op by op (see kernels/maxsim.h).
 *
 * Layouts: a is [I*J, K] (row r = i*J + j), b is [M*N, K] (row c = m*N + n), scores and dscores are
 * [I*J, M*N] = [I, J, M, N], values and indices are [I*J, M] = [I, J, M].
 */
#include "../kernels/maxsim.h"

#include "gemm_cpu.h"
#include "track.h"

#include <string.h>

#define L_SCORES "scores [I,J,M,N] f32 (einsum result)"
#define L_VALUES "max(-1).values [I,J,M] f32"
#define L_IDX "max(-1).indices [I,J,M] int64 (saved)"
#define L_DSCORES "dscores [I,J,M,N] f32 (zeros + scatter)"

/* values, indices = scores.max(-1): per (r, m), scan n ascending; ms_better is PyTorch's rule (NaN wins, then
 * the lowest n among ties). */
static void max_last_dim(const ms_dims *d, const float *scores, float *values, int64_t *idx)
{
    size_t R = ms_rows(d), M = d->M, N = d->N;
    for (size_t r = 0; r < R; r++)
        for (size_t m = 0; m < M; m++) {
            const float *s = scores + (r * M + m) * N; /* scores[i, j, m, :], (N,) */
            size_t arg = 0;
            for (size_t n = 1; n < N; n++)
                if (ms_better(s[n], (long long)n, s[arg], (long long)arg)) arg = n;
            values[r * M + m] = s[arg];
            idx[r * M + m] = (int64_t)arg;
        }
}

float *naive_ms_forward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved)
{
    size_t R = ms_rows(d), C = ms_cols(d), I = d->I, J = d->J, M = d->M;
    /* scores [I*J, M*N] = a [I*J, K] . b [M*N, K]^T: the einsum is one GEMM and its result is the 4-D
     * tensor */
    float *scores = host_alloc_array(ms_scores_count(d), DT_F32, L_SCORES);
    sgemm_cpu(0, 1, R, C, d->K, 1.0f, a, d->K, b, d->K, 0.0f, scores, C);

    float *values = host_alloc_array(ms_arg_count(d), DT_F32, L_VALUES);
    int64_t *idx = host_alloc_array(ms_arg_count(d), DT_I64, L_IDX);
    max_last_dim(d, scores, values, idx);
    host_free(scores); /* a temporary: MaxBackward keeps the indices, not its input */

    /* out = values.sum(1): j ascending */
    float *out = host_alloc_array(ms_out_count(d), DT_F32, MS_LABEL_OUT);
    for (size_t i = 0; i < I; i++)
        for (size_t m = 0; m < M; m++) {
            float s = 0.0f;
            for (size_t j = 0; j < J; j++) s += values[(i * J + j) * M + m];
            out[i * M + m] = s;
        }
    host_free(values);
    saved->idx = idx;
    return out;
}

void naive_ms_backward(const ms_dims *d, const float *a, const float *b, naive_ms_saved *saved,
                       const float *dout, float **da, float **db)
{
    size_t R = ms_rows(d), C = ms_cols(d), J = d->J, M = d->M, N = d->N, K = d->K;
    /* MaxBackward: zeros of the input's shape, the (expanded) dout scattered at the saved indices */
    float *dscores = host_alloc_array(ms_scores_count(d), DT_F32, L_DSCORES);
    memset(dscores, 0, ms_scores_count(d) * sizeof(float));
    for (size_t r = 0; r < R; r++)
        for (size_t m = 0; m < M; m++)
            dscores[(r * M + m) * N + (size_t)saved->idx[r * M + m]] = dout[(r / J) * M + m];
    host_free(saved->idx); /* the node has run: autograd releases what it saved */
    saved->idx = NULL;

    /* BmmBackward: da [I*J, K] = dscores [I*J, M*N] . b [M*N, K]; db [M*N, K] = dscores^T . a [I*J, K] */
    float *ga = host_alloc_array(ms_a_count(d), DT_F32, MS_LABEL_DA);
    sgemm_cpu(0, 0, R, K, C, 1.0f, dscores, C, b, K, 0.0f, ga, K);
    float *gb = host_alloc_array(ms_b_count(d), DT_F32, MS_LABEL_DB);
    sgemm_cpu(1, 0, C, K, R, 1.0f, dscores, C, a, K, 0.0f, gb, K);
    host_free(dscores);
    *da = ga;
    *db = gb;
}


mem_formula naive_ms_memory(const ms_dims *d)
{
    size_t A = size_mul(ms_a_count(d), 4), B = size_mul(ms_b_count(d), 4), O = size_mul(ms_out_count(d), 4);
    size_t S = size_mul(ms_scores_count(d), 4);  /* scores, later dscores */
    size_t V = size_mul(ms_arg_count(d), 4);     /* max values f32 */
    size_t X = size_mul(ms_arg_count(d), 8);     /* max indices int64 */
    size_t in = size_add(A, B);
    size_t f1 = size_add(size_add(in, S), size_add(V, X));  /* inside max: scores, values, indices */
    size_t f2 = size_add(size_add(in, V), size_add(X, O));  /* inside sum: values, indices, out */
    size_t live = size_add(size_add(in, X), O);             /* after forward: the indices and out */
    /* dout (as big as out) + dscores, indices alive */
    size_t b1 = size_add(size_add(live, O), S);
    /* + da, db; indices gone */
    size_t b2 = size_add(size_add(size_add(in, O), size_add(O, S)), size_add(A, B));
    /* a b | scores values idx out | dout dscores da db */
    mem_formula f = {ms_max_size(ms_max_size(f1, f2), ms_max_size(b1, b2)), live, 10};
    return f;
}
