/* logchain_tree.c - the forum's tree of log-space matrix products and the backward autograd would run.
 *
 * Layouts (row r = b*t + s runs over the N = n*t independent chains, C2 = c*c):
 *   x     [r][i][j]          (n,t,v,c)         bulk  [s][i][j][k]   (1,t,v-1,c,c)
 *   stack [r][i][j][k]       (n,t,m,c,c)       the m matrices entering a tree level
 *   pair tensors [r][p][..]  (n,t,m/2,c,c) or (n,t,m/2,c): pair p of row r multiplies stack[r][2p] @
 *   stack[r][2p+1]
 * A level's pair products are indexed q = r * pairs + p, q < N * pairs. The names follow the forum's code:
 * stck1 = stack[..., 0::2, :, :] (the left operands), stck2 = stack[..., 1::2, :, :] (the right ones).
 * Allocation order is the dataflow's order: the memory formula and the golden CSV rows depend on it.
 */
#include "logchain_tree.h"

#include "gemm_cpu.h"
#include "track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLAMP_MIN 1e-10f /* the forum's torch.clamp(..., 1e-10) */

static float *falloc(size_t count, const char *label) { return host_alloc_array(count, DT_F32, label); }

/* One tree level's shape. */
typedef struct {
    size_t N;     /* chains, n*t */
    size_t c;
    size_t m;     /* matrices entering the level */
    size_t pairs; /* m/2 products per chain */
    size_t carry; /* m%2: 1 when the last matrix has no partner and is carried up */
} level_shape;

static level_shape level_of(size_t N, size_t c, size_t m)
{
    level_shape L = {N, c, m, m / 2, m % 2};
    return L;
}

/* (c, c) matrix p of stck1 (side 0) or stck2 (side 1) of row r */
static const float *operand(const level_shape *L, const float *stack, size_t r, size_t p, int side)
{
    return stack + (r * L->m + 2 * p + (size_t)side) * L->c * L->c;
}

/* log-sum-exp of a (c,) row with a max shift */
static float row_logsumexp(const float *row, size_t c)
{
    float mx = row[0], s = 0.0f;
    for (size_t k = 1; k < c; k++) mx = fmaxf(mx, row[k]);
    for (size_t k = 0; k < c; k++) s += expf(row[k] - mx);
    return mx + logf(s);
}

/* ---- forward, one level -------------------------------------------------------------------------------- */

/* torch.max(A, dim=-1): each row's maximum and its first argmax */
static void row_max(const float *A, size_t c, float *mx, int64_t *arg)
{
    for (size_t j = 0; j < c; j++) {
        size_t a = 0;
        for (size_t k = 1; k < c; k++) /* torch.max propagates NaN: the first NaN wins */
            if (A[j * c + k] > A[j * c + a] || (isnan(A[j * c + k]) && !isnan(A[j * c + a]))) a = k;
        mx[j] = A[j * c + a];
        arg[j] = (int64_t)a;
    }
}

/* torch.max(B, dim=-2): each column's maximum and its first argmax */
static void col_max(const float *B, size_t c, float *mx, int64_t *arg)
{
    for (size_t k = 0; k < c; k++) {
        mx[k] = B[k];
        arg[k] = 0;
    }
    for (size_t j = 1; j < c; j++)
        for (size_t k = 0; k < c; k++)
            /* NaN wins, as in torch.max */
            if (B[j * c + k] > mx[k] || (isnan(B[j * c + k]) && !isnan(mx[k]))) {
                mx[k] = B[j * c + k];
                arg[k] = (int64_t)j;
            }
}

/* stck_side - b -> exp -> clamp: three ops, three tensors; the difference dies after exp. b broadcasts along
 * rows (side 0: b1 is (c,1) per pair) or columns (side 1: b2 is (1,c)). Sets *e (saved) and *s (saved). */
static void exp_clamp(const level_shape *L, const float *stack, const float *b, int side, float **e,
                      float **s)
{
    static const char *const d_label[2] = {"level: d1 = stck1 - b1 (n,t,m/2,c,c)",
                                           "level: d2 = stck2 - b2 (n,t,m/2,c,c)"};
    static const char *const e_label[2] = {"level: e1 = exp(d1) (n,t,m/2,c,c) saved",
                                           "level: e2 = exp(d2) (n,t,m/2,c,c) saved"};
    static const char *const s_label[2] = {"level: s1 = clamp(e1) (n,t,m/2,c,c) saved",
                                           "level: s2 = clamp(e2) (n,t,m/2,c,c) saved"};
    size_t c = L->c, C2 = c * c, npair = L->N * L->pairs, total = npair * C2;
    float *dd = falloc(total, d_label[side]);
    for (size_t q = 0; q < npair; q++) {
        const float *A = operand(L, stack, q / L->pairs, q % L->pairs, side);
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) dd[(q * c + j) * c + k] = A[j * c + k] - b[q * c + (side ? k : j)];
    }
    *e = falloc(total, e_label[side]);
    for (size_t i = 0; i < total; i++) (*e)[i] = expf(dd[i]);
    host_free(dd);
    *s = falloc(total, s_label[side]);
    /* torch.clamp(min=) keeps a NaN (fmaxf would replace it with the bound and hide it) */
    for (size_t i = 0; i < total; i++) (*s)[i] = (*e)[i] < CLAMP_MIN ? CLAMP_MIN : (*e)[i];
}

/* mul = s1 @ s2 (saved), then b1 + b2 + log(mul): the level's result (n,t,m/2,c,c). Frees b1, b2. */
static float *log_product(const level_shape *L, const float *s1, const float *s2, float *b1, float *b2,
                          float **mul)
{
    size_t c = L->c, C2 = c * c, npair = L->N * L->pairs, total = npair * C2;
    /* N * pairs independent (c x c) products -- the O(c^3) step */
    *mul = falloc(total, "level: mul = s1 @ s2 (n,t,m/2,c,c) saved");
    sgemm_cpu_strided_batched(0, 0, c, c, c, 1.0f, s1, c, C2, s2, c, C2, 0.0f, *mul, c, C2, npair);
    float *bsum = falloc(total, "level: b = b1 + b2 (n,t,m/2,c,c)");
    for (size_t q = 0; q < npair; q++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) bsum[(q * c + j) * c + k] = b1[q * c + j] + b2[q * c + k];
    float *lm = falloc(total, "level: log(mul) (n,t,m/2,c,c)");
    for (size_t i = 0; i < total; i++) lm[i] = logf((*mul)[i]);
    float *res = falloc(total, "level: result b + log(mul) (n,t,m/2,c,c)");
    for (size_t i = 0; i < total; i++) res[i] = bsum[i] + lm[i];
    /* mulstack returns: its locals b1, b2 (values), b and log(mul) die; the indices live on in MaxBackward */
    host_free(b1);
    host_free(b2);
    host_free(bsum);
    host_free(lm);
    return res;
}

/* odd level: torch.cat([result, stack[..., -1:, :, :]], dim=-3) carries the unpaired matrix upward */
static float *carry_up(const level_shape *L, const float *stack, float *res)
{
    size_t C2 = L->c * L->c, m_next = L->pairs + 1;
    float *next = falloc(L->N * m_next * C2, "level: cat(result, carry) (n,t,m/2+1,c,c)");
    for (size_t r = 0; r < L->N; r++) {
        memcpy(next + r * m_next * C2, res + r * L->pairs * C2, L->pairs * C2 * sizeof(float));
        memcpy(next + (r * m_next + L->pairs) * C2, stack + (r * L->m + L->m - 1) * C2, C2 * sizeof(float));
    }
    host_free(res);
    return next;
}

/* One level: stack (N, m, c, c) -> (N, m/2 + m%2, c, c). Saves idx, e, s and mul of level l for backward. */
static float *level_forward(const level_shape *L, const float *stack, int l, naive_lc_saved *sv)
{
    size_t c = L->c, nvec = L->N * L->pairs * c;
    /* b1 = torch.max(stck1, dim=-1, keepdim=True), b2 = torch.max(stck2, dim=-2, keepdim=True): values and
     * int64 indices; MaxBackward keeps the indices */
    float *b1 = falloc(nvec, "level: b1 = max(stck1,-1) values (n,t,m/2,c,1)");
    int64_t *idx1 = host_alloc_array(nvec, DT_I64, "level: b1 argmax (n,t,m/2,c,1) int64 saved");
    float *b2 = falloc(nvec, "level: b2 = max(stck2,-2) values (n,t,m/2,1,c)");
    int64_t *idx2 = host_alloc_array(nvec, DT_I64, "level: b2 argmax (n,t,m/2,1,c) int64 saved");
    for (size_t q = 0; q < L->N * L->pairs; q++) {
        size_t r = q / L->pairs, p = q % L->pairs;
        row_max(operand(L, stack, r, p, 0), c, b1 + q * c, idx1 + q * c);
        col_max(operand(L, stack, r, p, 1), c, b2 + q * c, idx2 + q * c);
    }
    exp_clamp(L, stack, b1, 0, &sv->e1[l], &sv->s1[l]);
    exp_clamp(L, stack, b2, 1, &sv->e2[l], &sv->s2[l]);
    float *res = log_product(L, sv->s1[l], sv->s2[l], b1, b2, &sv->mul[l]);
    sv->idx1[l] = idx1;
    sv->idx2[l] = idx2;
    return L->carry ? carry_up(L, stack, res) : res;
}

/* ---- forward ------------------------------------------------------------------------------------------- */

/* middle = x[..., :-1, :, None] + bulk.log(): log(bulk) (1,t,v-1,c,c) is a temporary; middle is
 * (n,t,v-1,c,c), every batch row's own copy of every log transition matrix. */
static float *make_middle(const lc_dims *d, const float *x, const float *bulk)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), C2 = c * c, V1 = v - 1;
    float *logbulk = falloc(lc_bulk_count(d), "log(bulk) (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) logbulk[e] = logf(bulk[e]);
    float *middle = falloc(size_mul(N, V1 * C2), "middle = x0 + log(bulk) (n,t,v-1,c,c)");
    for (size_t r = 0; r < N; r++)
        for (size_t i = 0; i < V1; i++)
            for (size_t j = 0; j < c; j++) {
                float xv = x[(r * v + i) * c + j];
                const float *lb = logbulk + ((r % t) * V1 + i) * C2 + j * c;
                float *o = middle + (r * V1 + i) * C2 + j * c;
                for (size_t k = 0; k < c; k++) o[k] = xv + lb[k];
            }
    host_free(logbulk);
    return middle;
}

/* the forum: torch.cat([stack, torch.zeros(...)], dim=-3) -- a log-space all-ones matrix, not the identity */
static float *zero_pad(size_t N, size_t C2, float *stack, size_t m)
{
    float *padded = falloc(N * (m + 1) * C2, "level: cat(stack, zeros) (n,t,m+1,c,c)");
    for (size_t r = 0; r < N; r++) {
        memcpy(padded + r * (m + 1) * C2, stack + r * m * C2, m * C2 * sizeof(float));
        memset(padded + (r * (m + 1) + m) * C2, 0, C2 * sizeof(float));
    }
    host_free(stack);
    return padded;
}

/* middle = logsumexp(middle.squeeze(-3) + x1, dim=-1); result = logsumexp(p0.log() + middle, dim=-1).
 * last (n,t,c,c) is the tree's one remaining matrix per chain; frees it. Saves f, g, h; returns out (n,t). */
static float *chain_ends(const lc_dims *d, float *last, const float *x, const float *p0, naive_lc_saved *sv)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), C2 = c * c, V1 = v - 1;
    float *f = falloc(size_mul(N, C2), "f = last + x[v-1] (n,t,c,c) saved");
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++)
                f[(r * c + j) * c + k] = last[r * C2 + j * c + k] + x[(r * v + V1) * c + k];
    host_free(last);
    float *g = falloc(N * c, "g = logsumexp(f,-1) (n,t,c) saved");
    for (size_t q = 0; q < N * c; q++) g[q] = row_logsumexp(f + q * c, c);
    float *lp0 = falloc(lc_p0_count(d), "log(p0) (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) lp0[e] = logf(p0[e]);
    float *h = falloc(N * c, "h = log(p0) + g (n,t,c) saved");
    for (size_t r = 0; r < N; r++)
        for (size_t j = 0; j < c; j++) h[r * c + j] = lp0[(r % t) * c + j] + g[r * c + j];
    host_free(lp0);
    float *out = falloc(N, "out (n,t)");
    for (size_t r = 0; r < N; r++) out[r] = row_logsumexp(h + r * c, c);
    sv->f = f;
    sv->g = g;
    sv->h = h;
    return out;
}

float *naive_lc_forward(const lc_dims *d, const float *x, const float *bulk, const float *p0, lc_odd_mode odd,
                        naive_lc_saved *sv)
{
    size_t N = lc_rows(d), c = d->c;
    memset(sv, 0, sizeof *sv);
    sv->zero_pad = odd == LC_ODD_ZERO_PAD;
    float *stack = make_middle(d, x, bulk);
    size_t m = d->v - 1;
    int l = 0;
    while (m > 1) { /* while middle.shape[-3] > 1: middle = mulstack(middle) */
        if (m % 2 == 1 && odd == LC_ODD_ZERO_PAD) stack = zero_pad(N, c * c, stack, m++);
        level_shape L = level_of(N, c, m);
        sv->m[l] = m;
        float *next = level_forward(&L, stack, l, sv);
        host_free(stack); /* the old stack is not saved by any node */
        stack = next;
        m = L.pairs + L.carry;
        l++;
    }
    sv->levels = l;
    return chain_ends(d, stack, x, p0, sv);
}

/* ---- backward, one level ------------------------------------------------------------------------------- */

/* b = b1 + b2 (AddBackward, then the sum-to-size of the broadcast): row sums and column sums of G_in.
 * G_in is the gradient of the level's output (N, pairs + carry, c, c). */
static void bias_grads(const level_shape *L, const float *G_in, float **gb1, float **gb2)
{
    size_t c = L->c, C2 = c * c, mo = L->pairs + L->carry, nvec = L->N * L->pairs * c;
    *gb1 = falloc(nvec, "level grad: b1 (n,t,m/2,c,1)");
    *gb2 = falloc(nvec, "level grad: b2 (n,t,m/2,1,c)");
    for (size_t q = 0; q < L->N * L->pairs; q++) {
        const float *G = G_in + ((q / L->pairs) * mo + q % L->pairs) * C2;
        float *r1 = *gb1 + q * c, *r2 = *gb2 + q * c;
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
}

/* LogBackward: gmul = grad / mul; then MmBackward: gs1 = gmul @ s2^T, gs2 = s1^T @ gmul (two more O(c^3)
 * products per pair). Each node releases its saved tensors once it has run: mul, then s1 and s2. */
static void product_grads(const level_shape *L, const float *G_in, int l, naive_lc_saved *sv, float **gs1,
                          float **gs2)
{
    size_t c = L->c, C2 = c * c, mo = L->pairs + L->carry, npair = L->N * L->pairs;
    float *gmul = falloc(npair * C2, "level grad: mul (n,t,m/2,c,c)");
    for (size_t q = 0; q < npair; q++) {
        const float *G = G_in + ((q / L->pairs) * mo + q % L->pairs) * C2, *M = sv->mul[l] + q * C2;
        for (size_t e = 0; e < C2; e++) gmul[q * C2 + e] = G[e] / M[e];
    }
    host_free(sv->mul[l]);
    *gs1 = falloc(npair * C2, "level grad: s1 (n,t,m/2,c,c)");
    sgemm_cpu_strided_batched(0, 1, c, c, c, 1.0f, gmul, c, C2, sv->s2[l], c, C2, 0.0f, *gs1, c, C2, npair);
    *gs2 = falloc(npair * C2, "level grad: s2 (n,t,m/2,c,c)");
    sgemm_cpu_strided_batched(1, 0, c, c, c, 1.0f, sv->s1[l], c, C2, gmul, c, C2, 0.0f, *gs2, c, C2, npair);
    host_free(gmul);
    host_free(sv->s1[l]);
    host_free(sv->s2[l]);
}

/* ClampMinBackward: grad where e >= 1e-10, else 0; ExpBackward: grad * e. Frees gs and the saved e; returns
 * the gradient of d = stck - b. */
static float *clamp_exp_grad(size_t total, float *gs, float *e, int side)
{
    static const char *const ge_label[2] = {"level grad: e1 (n,t,m/2,c,c)", "level grad: e2 (n,t,m/2,c,c)"};
    static const char *const gd_label[2] = {"level grad: d1 (n,t,m/2,c,c)", "level grad: d2 (n,t,m/2,c,c)"};
    float *ge = falloc(total, ge_label[side]);
    for (size_t i = 0; i < total; i++) ge[i] = e[i] >= CLAMP_MIN ? gs[i] : 0.0f;
    host_free(gs);
    float *gd = falloc(total, gd_label[side]);
    for (size_t i = 0; i < total; i++) gd[i] = ge[i] * e[i];
    host_free(ge);
    host_free(e);
    return gd;
}

/* SubBackward: d = stck - b, so b's gradient also gets minus the row (column) sums of gd. In exact
 * arithmetic, with no clamp active, this cancels the b1 + b2 path: the max shift does not change the
 * result. */
static void shift_grads(const level_shape *L, const float *gd1, const float *gd2, float *gb1, float *gb2)
{
    size_t c = L->c;
    for (size_t q = 0; q < L->N * L->pairs; q++)
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) {
                gb1[q * c + j] -= gd1[(q * c + j) * c + k];
                gb2[q * c + k] -= gd2[(q * c + j) * c + k];
            }
}

/* The stack's gradient: stck1 = stack[0::2] and stck2 = stack[1::2] get gd1, gd2 (plus MaxBackward's scatter
 * of gb at the argmax), the carried matrix gets its slice of G_in. PyTorch builds one zero-filled full-size
 * gradient per view and adds them; here one buffer receives all three, every element written. */
static float *stack_grad(const level_shape *L, const float *G_in, const float *gd1, const float *gd2,
                         const float *gb1, const float *gb2, const int64_t *idx1, const int64_t *idx2)
{
    size_t c = L->c, C2 = c * c, m = L->m, mo = L->pairs + L->carry;
    float *G_out = falloc(L->N * m * C2, "level grad: stack (n,t,m,c,c)");
    for (size_t q = 0; q < L->N * L->pairs; q++) {
        float *o1 = G_out + ((q / L->pairs) * m + 2 * (q % L->pairs)) * C2, *o2 = o1 + C2;
        memcpy(o1, gd1 + q * C2, C2 * sizeof(float));
        memcpy(o2, gd2 + q * C2, C2 * sizeof(float));
        for (size_t j = 0; j < c; j++) o1[j * c + (size_t)idx1[q * c + j]] += gb1[q * c + j];
        for (size_t k = 0; k < c; k++) o2[(size_t)idx2[q * c + k] * c + k] += gb2[q * c + k];
    }
    if (L->carry)
        for (size_t r = 0; r < L->N; r++)
            memcpy(G_out + (r * m + m - 1) * C2, G_in + (r * mo + L->pairs) * C2, C2 * sizeof(float));
    return G_out;
}

/* Backward of level l: G_in (N, pairs + carry, c, c) -> the gradient of its input stack (N, m, c, c).
 * Frees G_in and everything the level saved. */
static float *level_backward(const level_shape *L, float *G_in, int l, naive_lc_saved *sv)
{
    size_t total = L->N * L->pairs * L->c * L->c;
    float *gb1, *gb2, *gs1, *gs2;
    bias_grads(L, G_in, &gb1, &gb2);
    product_grads(L, G_in, l, sv, &gs1, &gs2);
    float *gd1 = clamp_exp_grad(total, gs1, sv->e1[l], 0);
    float *gd2 = clamp_exp_grad(total, gs2, sv->e2[l], 1);
    shift_grads(L, gd1, gd2, gb1, gb2);
    float *G_out = stack_grad(L, G_in, gd1, gd2, gb1, gb2, sv->idx1[l], sv->idx2[l]);
    host_free(gd1);
    host_free(gd2);
    host_free(gb1);
    host_free(gb2);
    host_free(sv->idx1[l]);
    host_free(sv->idx2[l]);
    host_free(G_in);
    sv->mul[l] = sv->s1[l] = sv->s2[l] = sv->e1[l] = sv->e2[l] = NULL;
    sv->idx1[l] = sv->idx2[l] = NULL;
    return G_out;
}

/* ---- backward ------------------------------------------------------------------------------------------ */

/* The two logsumexps and x1, in reverse: out = logsumexp(h) -> gh; h = log(p0) + g -> dp0; g = logsumexp(f)
 * -> gf. Sets *dp0, allocates *dx with its last variable's row (x1 = x[..., -1, None, :] gets the column sums
 * of gf); returns gf, the gradient of the tree's last (n,t,1,c,c) result. Frees f, g, h. */
static float *ends_backward(const lc_dims *d, const float *p0, const float *out, naive_lc_saved *sv,
                            const float *dout, float **dx, float **dp0)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), V1 = v - 1;
    float *gh = falloc(N * c, "grad h (n,t,c)");
    for (size_t q = 0; q < N * c; q++) gh[q] = dout[q / c] * expf(sv->h[q] - out[q / c]);
    host_free(sv->h);
    /* log(p0)'s gradient is gh summed over the broadcast n, then LogBackward divides by p0 */
    float *glp0 = falloc(lc_p0_count(d), "grad log(p0) summed over n (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) glp0[e] = 0.0f;
    for (size_t q = 0; q < N * c; q++) glp0[((q / c) % t) * c + q % c] += gh[q];
    *dp0 = falloc(lc_p0_count(d), "dp0 (1,t,c)");
    for (size_t e = 0; e < lc_p0_count(d); e++) (*dp0)[e] = glp0[e] / p0[e];
    host_free(glp0);
    float *gf = falloc(size_mul(N, c * c), "grad f (n,t,c,c)");
    for (size_t q = 0; q < N * c; q++)
        for (size_t k = 0; k < c; k++) gf[q * c + k] = gh[q] * expf(sv->f[q * c + k] - sv->g[q]);
    host_free(gh);
    host_free(sv->f);
    host_free(sv->g);
    sv->f = sv->g = sv->h = NULL;
    *dx = falloc(lc_x_count(d), "dx (n,t,v,c)");
    for (size_t r = 0; r < N; r++) {
        float *o = *dx + (r * v + V1) * c;
        for (size_t k = 0; k < c; k++) o[k] = 0.0f;
        for (size_t j = 0; j < c; j++)
            for (size_t k = 0; k < c; k++) o[k] += gf[(r * c + j) * c + k];
    }
    return gf;
}

/* middle = x0 + log(bulk), in reverse: x0 = x[..., :-1, :, None] gets the row sums of G (n,t,v-1,c,c),
 * log(bulk) gets the sum over n, then LogBackward divides by bulk. Frees G; returns dbulk. */
static float *middle_backward(const lc_dims *d, const float *bulk, float *G, float *dx)
{
    size_t t = d->t, v = d->v, c = d->c, N = lc_rows(d), C2 = c * c, V1 = v - 1;
    for (size_t r = 0; r < N; r++)
        for (size_t i = 0; i < V1; i++)
            for (size_t j = 0; j < c; j++) {
                const float *row = G + (r * V1 + i) * C2 + j * c;
                float acc = 0.0f;
                for (size_t k = 0; k < c; k++) acc += row[k];
                dx[(r * v + i) * c + j] = acc;
            }
    float *glb = falloc(lc_bulk_count(d), "grad log(bulk) summed over n (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) glb[e] = 0.0f;
    for (size_t r = 0; r < N; r++)
        for (size_t e = 0; e < V1 * C2; e++) glb[(r % t) * V1 * C2 + e] += G[r * V1 * C2 + e];
    host_free(G);
    float *dbulk = falloc(lc_bulk_count(d), "dbulk (1,t,v-1,c,c)");
    for (size_t e = 0; e < lc_bulk_count(d); e++) dbulk[e] = glb[e] / bulk[e];
    host_free(glb);
    return dbulk;
}

void naive_lc_backward(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *out,
                       naive_lc_saved *sv, const float *dout, float **dx, float **dbulk, float **dp0)
{
    (void)x; /* x enters only by addition: its gradient needs no saved value of it */
    if (sv->zero_pad) {
        fprintf(stderr,
                "naive_lc_backward: the zero-padding forward is a demonstration without a backward\n");
        abort();
    }
    float *G = ends_backward(d, p0, out, sv, dout, dx, dp0);
    for (int l = sv->levels - 1; l >= 0; l--) { /* down the tree, top level first */
        level_shape L = level_of(lc_rows(d), d->c, sv->m[l]);
        G = level_backward(&L, G, l, sv);
    }
    *dbulk = middle_backward(d, bulk, G, *dx);
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

/* ---- memory formula ------------------------------------------------------------------------------------ */

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

/* The closed form of docs/lesson-2.md §4 (bytes; N = n t chains; Q = 4 N c^2, one (c,c) f32 matrix per chain;
 * I = the inputs x, bulk, p0; xb = x's bytes 4 N v c, pb = p0's 4 t c). Every pair product keeps
 * e1, s1, e2, s2, mul (5Q) and two int64 (c,) index vectors (16 N c), and a tree over v-1 matrices makes v-2
 * products whatever its shape (each removes one matrix), so the saved part is S = (v-2)(5Q + 16 N c).
 *   forward_live = I + S + f (Q) + g, h (8 N c) + out (4 N)
 *   peak         = I + S + 8 N c + the largest of
 *     5Q               forward, the top level's product (m = 2): its stack 2Q, b, log(mul) and the result 3Q
 *                      (the 8 N c is b1, b2 values); every lower level peaks lower by 4 N c per extra matrix
 *     3Q + xb + 8N+pb  backward, the top level's gs1, gs2 (2Q) beside G_in = grad f (Q); 8 N c is gb1, gb2;
 *                      out, dout, dp0 and dx are live
 *     2Q + 8N + pb     backward of the two logsumexps: f and grad f, g and grad h, out, dout, dp0 -- the
 *                      largest only when v = 2 (no tree: the first two candidates do not exist)
 * tests/logchain_memory_walk.c replays the dataflow tensor by tensor; test_lesson2.c asserts the two
 * agree. */
lc_memory naive_lc_memory(const lc_dims *d)
{
    size_t N = lc_rows(d), c = d->c, Nc = size_mul(N, c);
    size_t Q = size_mul(4, size_mul(Nc, c));
    size_t xb = size_mul(4, lc_x_count(d)), pb = size_mul(4, lc_p0_count(d));
    size_t inputs = size_add(size_add(xb, size_mul(4, lc_bulk_count(d))), pb);
    size_t S = size_mul(d->v - 2, size_add(size_mul(5, Q), size_mul(16, Nc))); /* v = 2: none */
    size_t base = size_add(inputs, S);
    size_t ends = size_add(size_mul(8, N), pb); /* out, dout, dp0 */
    size_t top = d->v >= 3 ? zmax(size_mul(5, Q), size_add(size_add(size_mul(3, Q), xb), ends))
                           : size_add(size_mul(2, Q), ends);
    lc_memory r = {0, 0, 0};
    r.forward_live = size_add(size_add(base, Q), size_add(size_mul(8, Nc), size_mul(4, N)));
    r.peak = size_add(size_add(base, size_mul(8, Nc)), top);
    return r;
}
