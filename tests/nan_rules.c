/* nan_rules.c - each lesson's NaN/Inf propagation rule (nan_testing.h), as PyTorch's formulation of the lesson
 * propagates it, and the planted cases that hold an implementation to it. One position is planted per case; the
 * rules name which elements must turn non-finite and which must stay finite (a NaN leaking into another row, a
 * -inf turned into NaN, or an index thrown off by a NaN comparison all break them). */
#include "nan_testing.h"

#include <math.h>
#include <string.h>

#include "../kernels/bmm_problem.h"
#include "../kernels/linear_ce.h"
#include "../kernels/logchain_problem.h"
#include "../lessons/lesson4.h"

extern const lesson lesson1_def __attribute__((weak));
extern const lesson lesson2_def __attribute__((weak));
extern const lesson lesson4_def __attribute__((weak));
extern const lesson lesson5_def __attribute__((weak));

static nan_expect hit; /* what the planted value makes of the elements it reaches: NT_NAN or NT_INF */

static size_t run(const lesson *L, const long long *dims, const char *impl, int input, size_t at, double v,
                  nan_rule rule)
{
    lesson_problem p;
    long long opts[LESSON_MAX_OPTS];
    for (int k = 0; k < lesson_nopts(L); k++) opts[k] = L->opts[k].def;
    const char *bad = L->make_problem(dims, opts, &p);
    if (bad) return (size_t)-1;
    nan_case c = {L, &p, impl, input, at, v, rule};
    return nan_check(&c);
}

/* --- lesson 1: out[b,g,:] = x[b,g,:] W[g], dx = dout W^T, dW[g] = x[:,g,:]^T dout[:,g,:] -------------------
 * x[b0,g0,k0] NaN (or +Inf): out[b0,g0,:] NaN (±Inf: W is never 0), dW[g0,k0,:] NaN (±Inf); dx and every other
 * element finite (torch.matmul propagates exactly so). */
enum { L1_X, L1_W, L1_DOUT, L1_OUT, L1_DX, L1_DW };
static const size_t B0 = 1, G0 = 1, K0 = 2;

static nan_expect rule1(const void *prob, int k, size_t e)
{
    const bmm_dims *d = prob;
    if (k == L1_OUT) return e / (d->G * d->N) == B0 && e / d->N % d->G == G0 ? hit : NT_FINITE;
    if (k == L1_DW) return e / (d->K * d->N) == G0 && e / d->N % d->K == K0 ? hit : NT_FINITE;
    return NT_FINITE;
}

size_t nan_lesson1(const char *impl, double value)
{
    const long long dims[] = {3, 2, 4, 5}; /* B, G, K, N */
    hit = isnan(value) ? NT_NAN : NT_INF;
    return run(&lesson1_def, dims, impl, L1_X, (B0 * 2 + G0) * 4 + K0, value, rule1);
}

/* --- lesson 2: out[n,t] = log sum over paths of exp(x along the path) p0 prod bulk -----------------------------
 * x[n0,t0,i0,k0] NaN: out[n0,t0] NaN and the whole chain's dx; dbulk[t0] and dp0[t0] (sums over n) NaN; every
 * other chain finite. x[n0,t0,i0,k0] = -inf is log 0, a legitimate value: as torch.logsumexp, everything stays
 * finite and that state's dx is exactly 0 (no path through it has weight). */
enum { L2_X, L2_BULK, L2_P0, L2_DOUT, L2_OUT, L2_DX, L2_DBULK, L2_DP0 };
static const size_t N0 = 2, T0 = 1, I0 = 2, S0 = 1;

static nan_expect rule2(const void *prob, int k, size_t e)
{
    const lc_dims *d = prob;
    size_t at = ((N0 * d->t + T0) * d->v + I0) * d->c + S0;
    if (hit == NT_ZERO) return k == L2_DX && e == at ? NT_ZERO : NT_FINITE;
    if (k == L2_OUT) return e == N0 * d->t + T0 ? NT_NAN : NT_FINITE;
    if (k == L2_DX) return e / (d->v * d->c) == N0 * d->t + T0 ? NT_NAN : NT_FINITE;
    if (k == L2_DBULK) return e / ((d->v - 1) * d->c * d->c) == T0 ? NT_NAN : NT_FINITE;
    if (k == L2_DP0) return e / d->c == T0 ? NT_NAN : NT_FINITE;
    return NT_FINITE;
}

size_t nan_lesson2(const char *impl, double value)
{
    const long long dims[] = {3, 2, 5, 3}; /* n, t, v, c: t = 2 so that dbulk[t0] and the other chain differ */
    hit = isnan(value) ? NT_NAN : NT_ZERO;
    return run(&lesson2_def, dims, impl, L2_X, ((N0 * 2 + T0) * 5 + I0) * 3 + S0, value, rule2);
}

/* --- lesson 4: a GRU step loop, rows of the batch independent ---------------------------------------------------
 * x[t0,b0,j] NaN: out[t,b0,:] NaN from step t0 on (h carries it), finite before; dx[:,b0,:] and dh0[b0] NaN (the
 * NaN states' gradients flow back through every step); dW_enc, dW_ih, dW_zh NaN (sums over the batch); the other
 * rows finite everywhere. */
enum { L4_X, L4_H0, L4_EPS, L4_WENC, L4_WIH, L4_WZH, L4_DOUT, L4_OUT, L4_DX, L4_DH0 };
static const size_t T4 = 1, B4 = 1;

static nan_expect rule4(const void *prob, int k, size_t e)
{
    const gru_dims *d = &((const gru_problem *)prob)->d;
    if (k == L4_OUT) return e / (d->B * d->H) >= T4 && e / d->H % d->B == B4 ? NT_NAN : NT_FINITE;
    if (k == L4_DX) return e / d->X % d->B == B4 ? NT_NAN : NT_FINITE;
    if (k == L4_DH0) return e / d->H == B4 ? NT_NAN : NT_FINITE;
    return NT_NAN; /* the weight gradients */
}

size_t nan_lesson4(const char *impl)
{
    const long long dims[] = {3, 2, 3, 4}; /* T, Bt, X, H */
    hit = NT_NAN;
    return run(&lesson4_def, dims, impl, L4_X, (T4 * 2 + B4) * 3 + 2, NAN, rule4);
}

/* --- lesson 5: loss = mean_i CE(x_i W^T, target_i) -----------------------------------------------------------
 * x[i0,h] NaN: row i0's logits and logsumexp NaN, so the loss (a mean) NaN, dx[i0,:] NaN and every dW element
 * (a sum over rows of (softmax - onehot) x) NaN; dx of the other rows finite (their softmax is untouched). */
enum { L5_X, L5_W, L5_TARGET, L5_DLOSS, L5_LOSS, L5_DX, L5_DW };
static const size_t R5 = 2;

static nan_expect rule5(const void *prob, int k, size_t e)
{
    const lce_dims *d = prob;
    if (k == L5_DX) return e / d->H == R5 ? NT_NAN : NT_FINITE;
    return NT_NAN; /* loss, dW */
}

size_t nan_lesson5(const char *impl)
{
    const long long dims[] = {4, 3, 7}; /* N, H, V */
    hit = NT_NAN;
    return run(&lesson5_def, dims, impl, L5_X, R5 * 3 + 1, NAN, rule5);
}
