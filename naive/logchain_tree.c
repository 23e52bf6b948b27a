/* logchain_tree.c - the forum's tree of log-space matrix products and the backward autograd would run.
 *
 * Layouts (row r = b*t + s runs over the n*t independent chains, C2 = c*c):
 *   x     [r][i][j]          (n,t,v,c)         bulk  [s][i][j][k]   (1,t,v-1,c,c)
 *   stack [r][i][j][k]       (n,t,m,c,c)       the m matrices entering a level
 *   pair tensors [r][p][..]  (n,t,P,c,c) or (n,t,P,c): pair p of row r multiplies stack[r][2p] @ stack[r][2p+1]
 */
#include "logchain_tree.h"

#include "../kernels/gemm_cpu.h"
#include "../kernels/track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLAMP_MIN 1e-10f /* the forum's torch.clamp(..., 1e-10) */

static float *falloc(size_t count, const char *label) { return host_alloc_array(count, DT_F32, label); }

/* One level: stack (N, m, c, c) -> result (N, P + carry, c, c). Saves idx/e/s/mul for backward. */
static float *level_forward(size_t N, size_t c, size_t m, const float *S, int l, naive_lc_saved *sv)
{
    size_t C2 = c * c, P = m / 2, carry = m % 2, NP = N * P;

    /* b1 = torch.max(stck1, dim=-1, keepdim=True): values (n,t,P,c,1) and int64 indices (saved) */
    float *b1 = falloc(NP * c, "level: b1 = max(stck1,-1) values (n,t,P,c,1)");
    int64_t *idx1 = host_alloc_array(NP * c, DT_I64, "level: b1 argmax (n,t,P,c,1) int64 saved");
    float *b2 = falloc(NP * c, "level: b2 = max(stck2,-2) values (n,t,P,1,c)");
    int64_t *idx2 = host_alloc_array(NP * c, DT_I64, "level: b2 argmax (n,t,P,1,c) int64 saved");
    for (size_t r = 0; r < N; r++)
        for (size_t p = 0; p < P; p++) {
            const float *A = S + (r * m + 2 * p) * C2, *B = A + C2; /* stck1, stck2: (c, c) */
            float *mb1 = b1 + (r * P + p) * c, *mb2 = b2 + (r * P + p) * c;
            int64_t *ib1 = idx1 + (r * P + p) * c, *ib2 = idx2 + (r * P + p) * c;
            for (size_t j = 0; j < c; j++) { /* row maxima of A */
                size_t arg = 0;
                for (size_t k = 1; k < c; k++)
                    if (A[j * c + k] > A[j * c + arg]) arg = k;
                mb1[j] = A[j * c + arg];
                ib1[j] = (int64_t)arg;
            }
            for (size_t k = 0; k < c; k++) { /* column maxima of B */
                mb2[k] = B[k];
                ib2[k] = 0;
            }
            for (size_t j = 1; j < c; j++)
                for (size_t k = 0; k < c; k++)
                    if (B[j * c + k] > mb2[k]) {
                        mb2[k] = B[j * c + k];
                        ib2[k] = (int64_t)j;
                    }
        }

    /* stck1 - b1 -> exp -> clamp: three ops, three tensors; the difference dies after exp. */
    float *dd = falloc(NP * C2, "level: d1 = stck1 - b1 (n,t,P,c,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t p = 0; p < P; p++)
            for (size_t j = 0; j < c; j++)
                for (size_t k = 0; k < c; k++)
                    dd[((r * P + p) * c + j) * c + k] = S[(r * m + 2 * p) * C2 + j * c + k] - b1[(r * P + p) * c + j];
    float *e1 = falloc(NP * C2, "level: e1 = exp(d1) (n,t,P,c,c) saved");
    for (size_t e = 0; e < NP * C2; e++) e1[e] = expf(dd[e]);
    host_free(dd);
    float *s1 = falloc(NP * C2, "level: s1 = clamp(e1) (n,t,P,c,c) saved");
    for (size_t e = 0; e < NP * C2; e++) s1[e] = fmaxf(e1[e], CLAMP_MIN);

    dd = falloc(NP * C2, "level: d2 = stck2 - b2 (n,t,P,c,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t p = 0; p < P; p++)
            for (size_t j = 0; j < c; j++)
                for (size_t k = 0; k < c; k++)
                    dd[((r * P + p) * c + j) * c + k] =
                        S[(r * m + 2 * p + 1) * C2 + j * c + k] - b2[(r * P + p) * c + k];
    float *e2 = falloc(NP * C2, "level: e2 = exp(d2) (n,t,P,c,c) saved");
    for (size_t e = 0; e < NP * C2; e++) e2[e] = expf(dd[e]);
    host_free(dd);
    float *s2 = falloc(NP * C2, "level: s2 = clamp(e2) (n,t,P,c,c) saved");
    for (size_t e = 0; e < NP * C2; e++) s2[e] = fmaxf(e2[e], CLAMP_MIN);

    /* mul = stck1 @ stck2: N*P independent (c x c) products -- the O(c^3) step */
    float *mul = falloc(NP * C2, "level: mul = s1 @ s2 (n,t,P,c,c) saved");
    sgemm_cpu_strided_batched(0, 0, c, c, c, 1.0f, s1, c, C2, s2, c, C2, 0.0f, mul, c, C2, NP);

    /* b = b1 + b2 broadcast to (c, c); log(mul); b + log(mul) */
    float *bsum = falloc(NP * C2, "level: b = b1 + b2 (n,t,P,c,c)");
    for (size_t q = 0; q < NP; q++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) bsum[(q * c + j) * c + k] = b1[q * c + j] + b2[q * c + k];
    float *lm = falloc(NP * C2, "level: log(mul) (n,t,P,c,c)");
    for (size_t e = 0; e < NP * C2; e++) lm[e] = logf(mul[e]);
    float *res = falloc(NP * C2, "level: result b + log(mul) (n,t,P,c,c)");
    for (size_t e = 0; e < NP * C2; e++) res[e] = bsum[e] + lm[e];
    /* mulstack returns: its locals b1, b2 (values), b and log(mul) die; the indices live on in MaxBackward */
    host_free(b1);
    host_free(b2);
    host_free(bsum);
    host_free(lm);

    sv->idx1[l] = idx1;
    sv->idx2[l] = idx2;
    sv->e1[l] = e1;
    sv->e2[l] = e2;
    sv->s1[l] = s1;
    sv->s2[l] = s2;
    sv->mul[l] = mul;
    if (!carry) return res;

    /* odd level: torch.cat([result, stack[..., -1:, :, :]], dim=-3) carries the unpaired matrix upward */
    float *next = falloc(N * (P + 1) * C2, "level: cat(result, carry) (n,t,P+1,c,c)");
    for (size_t r = 0; r < N; r++) {
        memcpy(next + r * (P + 1) * C2, res + r * P * C2, P * C2 * sizeof(float));
        memcpy(next + (r * (P + 1) + P) * C2, S + (r * m + m - 1) * C2, C2 * sizeof(float));
    }
    host_free(res);
    return next;
}

float *naive_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, lc_odd_mode odd,
                        naive_lc_saved *sv)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), C2 = c * c, V1 = v - 1;
    memset(sv, 0, sizeof *sv);
    sv->zero_pad = odd == LC_ODD_ZERO_PAD;

    /* middle = x[..., :-1, :, None] + bulk.log(): log(bulk) (1,t,v-1,c,c) is a temporary; middle is
     * (n,t,v-1,c,c), every batch row's own copy of every log transition matrix. */
    float *logbulk = falloc(lc_bulk_count(d), "log(bulk) (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) logbulk[e] = logf(bulk[e]);
    float *S = falloc(size_mul(N, V1 * C2), "middle = x0 + log(bulk) (n,t,v-1,c,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t i = 0; i < V1; i++)
            for (size_t j = 0; j < c; j++) {
                float xv = x[(r * v + i) * c + j];
                const float *lb = logbulk + ((r % t) * V1 + i) * C2 + j * c;
                float *o = S + (r * V1 + i) * C2 + j * c;
                for (size_t k = 0; k < c; k++) o[k] = xv + lb[k];
            }
    host_free(logbulk);

    size_t m = V1;
    int l = 0;
    while (m > 1) {
        if (m % 2 == 1 && odd == LC_ODD_ZERO_PAD) {
            /* the forum: torch.cat([stack, torch.zeros(...)], dim=-3) -- a log-space all-ones matrix */
            float *padded = falloc(N * (m + 1) * C2, "level: cat(stack, zeros) (n,t,m+1,c,c)");
            for (size_t r = 0; r < N; r++) {
                memcpy(padded + r * (m + 1) * C2, S + r * m * C2, m * C2 * sizeof(float));
                memset(padded + (r * (m + 1) + m) * C2, 0, C2 * sizeof(float));
            }
            host_free(S);
            S = padded;
            m++;
        }
        sv->m[l] = m;
        float *next = level_forward(N, c, m, S, l, sv);
        host_free(S); /* middle = mulstack(middle): the old stack is not saved by any node */
        S = next;
        m = m / 2 + m % 2;
        l++;
    }
    sv->levels = l;

    /* middle = logsumexp(middle.squeeze(-3) + x1, dim=-1); result = logsumexp(p0.log() + middle, dim=-1) */
    float *f = falloc(size_mul(N, C2), "f = last + x[v-1] (n,t,c,c) saved");
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) f[(r * c + j) * c + k] = S[r * C2 + j * c + k] + x[(r * v + V1) * c + k];
    host_free(S);
    float *g = falloc(N * c, "g = logsumexp(f,-1) (n,t,c) saved");
    for (size_t q = 0; q < N * c; q++) {
        const float *row = f + q * c;
        float mx = row[0], s = 0.0f;
        for (size_t k = 1; k < c; k++) mx = fmaxf(mx, row[k]);
        for (size_t k = 0; k < c; k++) s += expf(row[k] - mx);
        g[q] = mx + logf(s);
    }
    float *lp0 = falloc(lc_p0_count(d), "log(p0) (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) lp0[e] = logf(p0[e]);
    float *h = falloc(N * c, "h = log(p0) + g (n,t,c) saved");
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++) h[r * c + j] = lp0[(r % t) * c + j] + g[r * c + j];
    host_free(lp0);
    float *out = falloc(N, "out (n,t)");
    for (size_t r = 0; r < N; r++) {
        const float *row = h + r * c;
        float mx = row[0], s = 0.0f;
        for (size_t j = 1; j < c; j++) mx = fmaxf(mx, row[j]);
        for (size_t j = 0; j < c; j++) s += expf(row[j] - mx);
        out[r] = mx + logf(s);
    }
    sv->f = f;
    sv->g = g;
    sv->h = h;
    return out;
}

/* Backward of one level: G_in (N, P + carry, c, c) is the gradient of the level's result; returns the
 * gradient of the level's input stack (N, m, c, c). Frees G_in and everything the level saved. */
static float *level_backward(size_t N, size_t c, size_t m, float *G_in, int l, naive_lc_saved *sv)
{
    size_t C2 = c * c, P = m / 2, carry = m % 2, mo = P + carry, NP = N * P;
    float *mul = sv->mul[l], *s1 = sv->s1[l], *s2 = sv->s2[l], *e1 = sv->e1[l], *e2 = sv->e2[l];

    /* b = b1 + b2 (AddBackward, then the sum-to-size of the broadcast): row sums and column sums of G_in */
    float *gb1 = falloc(NP * c, "level grad: b1 (n,t,P,c,1)");
    float *gb2 = falloc(NP * c, "level grad: b2 (n,t,P,1,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t p = 0; p < P; p++) {
            const float *G = G_in + (r * mo + p) * C2;
            float *r1 = gb1 + (r * P + p) * c, *r2 = gb2 + (r * P + p) * c;
            for (size_t k = 0; k < c; k++) r2[k] = 0.0f;
            for (size_t j = 0; j < c; j++) {
                float acc = 0.0f;
                for (size_t k = 0; k < c; k++) {
                    acc += G[j * c + k];
                    r2[k] += G[j * c + k];
                }
                r1[j] = acc;
            }
        }

    /* LogBackward: grad / mul; the saved mul is released once the node has run */
    float *gmul = falloc(NP * C2, "level grad: mul (n,t,P,c,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t p = 0; p < P; p++) {
            const float *G = G_in + (r * mo + p) * C2, *M = mul + (r * P + p) * C2;
            float *o = gmul + (r * P + p) * C2;
            for (size_t e = 0; e < C2; e++) o[e] = G[e] / M[e];
        }
    host_free(mul);

    /* MmBackward: gs1 = gmul @ s2^T, gs2 = s1^T @ gmul (another two O(c^3) products per pair) */
    float *gs1 = falloc(NP * C2, "level grad: s1 (n,t,P,c,c)");
    sgemm_cpu_strided_batched(0, 1, c, c, c, 1.0f, gmul, c, C2, s2, c, C2, 0.0f, gs1, c, C2, NP);
    float *gs2 = falloc(NP * C2, "level grad: s2 (n,t,P,c,c)");
    sgemm_cpu_strided_batched(1, 0, c, c, c, 1.0f, s1, c, C2, gmul, c, C2, 0.0f, gs2, c, C2, NP);
    host_free(gmul);
    host_free(s1);
    host_free(s2);

    /* ClampMinBackward: grad where e >= 1e-10, else 0;  ExpBackward: grad * e */
    float *gd[2];
    float *gs[2] = {gs1, gs2}, *ee[2] = {e1, e2};
    const char *ge_label[2] = {"level grad: e1 (n,t,P,c,c)", "level grad: e2 (n,t,P,c,c)"};
    const char *gd_label[2] = {"level grad: d1 (n,t,P,c,c)", "level grad: d2 (n,t,P,c,c)"};
    for (int q = 0; q < 2; q++) {
        float *ge = falloc(NP * C2, ge_label[q]);
        for (size_t e = 0; e < NP * C2; e++) ge[e] = ee[q][e] >= CLAMP_MIN ? gs[q][e] : 0.0f;
        host_free(gs[q]);
        gd[q] = falloc(NP * C2, gd_label[q]);
        for (size_t e = 0; e < NP * C2; e++) gd[q][e] = ge[e] * ee[q][e];
        host_free(ge);
        host_free(ee[q]);
    }

    /* SubBackward: d = stck - b, so b's gradient also gets minus the row (column) sums of gd. In exact
     * arithmetic, with no clamp active, this cancels the b1 + b2 path: the max shift does not change r. */
    for (size_t q = 0; q < NP; q++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) {
                gb1[q * c + j] -= gd[0][(q * c + j) * c + k];
                gb2[q * c + k] -= gd[1][(q * c + j) * c + k];
            }

    /* The stack's gradient: stck1 = stack[0::2] and stck2 = stack[1::2] get gd1, gd2 (plus MaxBackward's
     * scatter of gb at the argmax), the carried matrix gets its slice of G_in. PyTorch builds one zero-filled
     * full-size gradient per view and adds them; here one buffer receives all three, every element written. */
    float *G_out = falloc(N * m * C2, "level grad: stack (n,t,m,c,c)");
    int64_t *idx1 = sv->idx1[l], *idx2 = sv->idx2[l];
    for (size_t r = 0; r < N; r++) {
        for (size_t p = 0; p < P; p++) {
            size_t q = r * P + p;
            float *o1 = G_out + (r * m + 2 * p) * C2, *o2 = o1 + C2;
            memcpy(o1, gd[0] + q * C2, C2 * sizeof(float));
            memcpy(o2, gd[1] + q * C2, C2 * sizeof(float));
            for (size_t j = 0; j < c; j++) o1[j * c + (size_t)idx1[q * c + j]] += gb1[q * c + j];
            for (size_t k = 0; k < c; k++) o2[(size_t)idx2[q * c + k] * c + k] += gb2[q * c + k];
        }
        if (carry) memcpy(G_out + (r * m + m - 1) * C2, G_in + (r * mo + P) * C2, C2 * sizeof(float));
    }
    host_free(gd[0]);
    host_free(gd[1]);
    host_free(gb1);
    host_free(gb2);
    host_free(idx1);
    host_free(idx2);
    host_free(G_in);
    sv->mul[l] = sv->s1[l] = sv->s2[l] = sv->e1[l] = sv->e2[l] = NULL;
    sv->idx1[l] = sv->idx2[l] = NULL;
    return G_out;
}

void naive_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *out,
                       naive_lc_saved *sv, const float *dout, float **dx, float **dbulk, float **dp0)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), C2 = c * c, V1 = v - 1;
    if (sv->zero_pad) {
        fprintf(stderr, "naive_lc_backward: the zero-padding forward is a demonstration without a backward\n");
        abort();
    }

    /* out = logsumexp(h): gh = dout * softmax(h); the saved h is released */
    float *gh = falloc(N * c, "grad h (n,t,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++) gh[r * c + j] = dout[r] * expf(sv->h[r * c + j] - out[r]);
    host_free(sv->h);
    sv->h = NULL;

    /* h = log(p0) + g: log(p0)'s gradient is gh summed over the broadcast n, then LogBackward divides by p0 */
    float *glp0 = falloc(lc_p0_count(d), "grad log(p0) summed over n (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) glp0[e] = 0.0f;
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++) glp0[(r % t) * c + j] += gh[r * c + j];
    float *gp0 = falloc(lc_p0_count(d), "dp0 (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) gp0[e] = glp0[e] / p0[e];
    host_free(glp0);

    /* g = logsumexp(f, -1): gf = gh[..., None] * softmax(f); the saved f and g are released */
    float *gf = falloc(size_mul(N, C2), "grad f (n,t,c,c)");
    for (size_t q = 0; q < N * c; q++)
        for (size_t k = 0; k < c; k++) gf[q * c + k] = gh[q] * expf(sv->f[q * c + k] - sv->g[q]);
    host_free(gh);
    host_free(sv->f);
    host_free(sv->g);
    sv->f = sv->g = NULL;

    /* f = last + x1: x1 = x[..., -1, None, :] gets the column sums of gf (dx's last variable) */
    float *gx = falloc(lc_x_count(d), "dx (n,t,v,c)");
    for (size_t r = 0; r < N; r++) {
        float *o = gx + (r * v + V1) * c;
        for (size_t k = 0; k < c; k++) o[k] = 0.0f;
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) o[k] += gf[(r * c + j) * c + k];
    }

    /* down the tree: gf is the gradient of the last level's (n,t,1,c,c) result */
    float *G = gf;
    for (int l = sv->levels - 1; l >= 0; l--) G = level_backward(N, c, sv->m[l], G, l, sv);

    /* middle = x0 + log(bulk): x0 = x[..., :-1, :, None] gets the row sums; log(bulk) gets the sum over n,
     * then LogBackward divides by bulk. G is now (n,t,v-1,c,c). */
    for (size_t r = 0; r < N; r++)
        for (size_t i = 0; i < V1; i++)
            for (size_t j = 0; j < c; j++) {
                const float *row = G + (r * V1 + i) * C2 + j * c;
                float acc = 0.0f;
                for (size_t k = 0; k < c; k++) acc += row[k];
                gx[(r * v + i) * c + j] = acc;
            }
    float *glb = falloc(lc_bulk_count(d), "grad log(bulk) summed over n (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) glb[e] = 0.0f;
    for (size_t r = 0; r < N; r++) {
        float *o = glb + (r % t) * V1 * C2;
        const float *src = G + r * V1 * C2;
        for (size_t e = 0; e < V1 * C2; e++) o[e] += src[e];
    }
    host_free(G);
    float *gb = falloc(lc_bulk_count(d), "dbulk (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) gb[e] = glb[e] / bulk[e];
    host_free(glb);
    (void)x;

    *dx = gx;
    *dbulk = gb;
    *dp0 = gp0;
}

void naive_lc_release(naive_lc_saved *sv)
{
    for (int l = 0; l < sv->levels; l++) {
        host_free(sv->idx1[l]);
        host_free(sv->idx2[l]);
        host_free(sv->e1[l]);
        host_free(sv->e2[l]);
        host_free(sv->s1[l]);
        host_free(sv->s2[l]);
        host_free(sv->mul[l]);
    }
    host_free(sv->f);
    host_free(sv->g);
    host_free(sv->h);
    memset(sv, 0, sizeof *sv);
}

/* ---- memory formula ---------------------------------------------------------------------------------- */

typedef struct {
    size_t live, peak;
    int saturated;
} walk;

static void grow(walk *w, size_t bytes)
{
    if (bytes == SIZE_MAX || w->live > SIZE_MAX - bytes) w->saturated = 1;
    if (w->saturated) return;
    w->live += bytes;
    if (w->live > w->peak) w->peak = w->live;
}

static void shrink(walk *w, size_t bytes)
{
    if (!w->saturated) w->live -= bytes;
}

lc_memory naive_lc_memory(const lc_dims *d)
{
    const size_t F = sizeof(float), I = sizeof(int64_t);
    size_t N = lc_rows(d), c = d->c, V1 = d->v - 1;
    size_t Q = size_mul(F, size_mul(N, size_mul(c, c))); /* one (n,t,c,c) f32 matrix per chain */
    size_t vecF = size_mul(F, size_mul(N, c)), vecI = size_mul(I, size_mul(N, c)); /* (n,t,c) f32 / int64 */
    size_t xb = size_mul(F, lc_x_count(d)), bb = size_mul(F, lc_bulk_count(d)), pb = size_mul(F, lc_p0_count(d));
    size_t ob = size_mul(F, lc_out_count(d));
    walk w = {0, 0, 0};

    /* ---- forward ---- */
    grow(&w, xb);
    grow(&w, bb);
    grow(&w, pb);                       /* the inputs */
    grow(&w, bb);                       /* log(bulk) */
    grow(&w, size_mul(V1, Q));          /* middle */
    shrink(&w, bb);
    size_t m = V1;
    while (m > 1) {
        size_t P = m / 2, carry = m % 2;
        size_t PQ = size_mul(P, Q), Pv = size_mul(P, vecF), Pi = size_mul(P, vecI);
        grow(&w, Pv), grow(&w, Pi), grow(&w, Pv), grow(&w, Pi);   /* b1, idx1, b2, idx2 */
        grow(&w, PQ), grow(&w, PQ), shrink(&w, PQ), grow(&w, PQ); /* d1, e1, -d1, s1 */
        grow(&w, PQ), grow(&w, PQ), shrink(&w, PQ), grow(&w, PQ); /* d2, e2, -d2, s2 */
        grow(&w, PQ), grow(&w, PQ), grow(&w, PQ), grow(&w, PQ);   /* mul, b, log(mul), result */
        shrink(&w, Pv), shrink(&w, Pv), shrink(&w, PQ), shrink(&w, PQ); /* b1, b2, b, log(mul) */
        if (carry) grow(&w, size_mul(P + 1, Q)), shrink(&w, PQ);  /* cat, -result */
        shrink(&w, size_mul(m, Q));                               /* the old stack */
        m = P + carry;
    }
    grow(&w, Q), shrink(&w, Q);                 /* f, -last stack */
    grow(&w, vecF), grow(&w, pb), grow(&w, vecF), shrink(&w, pb); /* g, log(p0), h, -log(p0) */
    grow(&w, ob);                               /* out */
    lc_memory r = {0, 0, 0};
    r.forward_live = w.live;

    /* ---- backward ---- */
    grow(&w, ob);                               /* dout */
    grow(&w, vecF), shrink(&w, vecF);           /* grad h, -h */
    grow(&w, pb), grow(&w, pb), shrink(&w, pb); /* grad log(p0), dp0, -grad log(p0) */
    grow(&w, Q), shrink(&w, vecF), shrink(&w, Q), shrink(&w, vecF); /* grad f, -grad h, -f, -g */
    grow(&w, xb);                               /* dx */
    /* levels in reverse: the sizes of level l depend on m_l, recomputed from V1 */
    size_t ms[LC_MAX_LEVELS];
    int L = 0;
    for (m = V1; m > 1; m = m / 2 + m % 2) ms[L++] = m;
    for (int l = L - 1; l >= 0; l--) {
        m = ms[l];
        size_t P = m / 2, carry = m % 2;
        size_t PQ = size_mul(P, Q), Pv = size_mul(P, vecF), Pi = size_mul(P, vecI);
        grow(&w, Pv), grow(&w, Pv);             /* gb1, gb2 */
        grow(&w, PQ), shrink(&w, PQ);           /* gmul, -mul */
        grow(&w, PQ), grow(&w, PQ);             /* gs1, gs2 */
        shrink(&w, PQ), shrink(&w, PQ), shrink(&w, PQ); /* -gmul, -s1, -s2 */
        for (int q = 0; q < 2; q++) {
            grow(&w, PQ), shrink(&w, PQ);       /* ge, -gs */
            grow(&w, PQ), shrink(&w, PQ), shrink(&w, PQ); /* gd, -ge, -e */
        }
        grow(&w, size_mul(m, Q));               /* G_out */
        shrink(&w, PQ), shrink(&w, PQ), shrink(&w, Pv), shrink(&w, Pv); /* gd1, gd2, gb1, gb2 */
        shrink(&w, Pi), shrink(&w, Pi);         /* idx1, idx2 */
        shrink(&w, size_mul(P + carry, Q));     /* G_in */
    }
    grow(&w, bb), shrink(&w, size_mul(V1, Q));  /* grad log(bulk), -grad middle */
    grow(&w, bb), shrink(&w, bb);               /* dbulk, -grad log(bulk) */
    r.peak = w.peak;
    if (w.saturated) r.peak = r.forward_live = SIZE_MAX;
    return r;
}
