/* test_lesson2.c - lesson 2's checks: exact references, gradient checks, agreement, memory, zero padding.
 *
 * Ground truth at tiny sizes is the brute-force sum over all c^v paths in double (logchain_bruteforce.c), which
 * also gives exact gradients by enumeration. Tolerances, all written as |x - ref| <= atol + rtol |ref|:
 *
 *   log Z (out). Each of the v steps of either algorithm adds numbers of the size of log Z (|lz| up to ~10 at
 *   tiny, ~100 at medium) and takes the log of a sum of c positive terms. Rounding gives an absolute error of
 *   about eps |lz| for the additions and sqrt(c) eps for the sum, per step, so
 *       err_lz = 2 v eps (max|lz| + sqrt(c)),   eps = 2^-23 (fp32)
 *   (a factor 2 over that estimate; a worst case linear in c would be c eps, we use the usual sqrt(c) growth).
 *   Gradients are exponentials exp(alpha + beta - lz) of sums of three such quantities: their relative error
 *   is the absolute error of the exponent, delta = 3 err_lz, so rtol = delta and atol = delta max|ref| (dbulk
 *   and dp0 sum dout-weighted terms of both signs over the batch, so an element can be small while its terms
 *   are not). Two fp32 implementations compared with each other: twice that.
 *   The naive tree's 1e-10 clamp: it only changes an entry that is more than 23 nats below its row (column)
 *   maximum. With these inputs (x ~ N(-2, 1), P in [1e-3, 1)) the spread is below ~15 nats, so the clamp never
 *   fires -- test_naive_clamp_inactive asserts it -- and no tolerance is spent on it.
 */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, mkdtemp */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "gradcheck.h"
#include "rng.h"
#include "track.h"
#include "../lessons/logchain_reference.h"
#include "lc_testing.h"
#include "../naive/logchain_tree.h"
#include "../optimized/logchain_forward.h"
#include "cli_harness.h"
#include "logchain_bruteforce.h"
#include "logchain_memory_walk.h"
#include "nan_testing.h"

#define EPS32 1.1920928955078125e-07 /* 2^-23 */

static const lc_dims TINY = {2, 1, 5, 3};
static const lc_dims SMALL = {10, 1, 6, 40};
static const lc_dims FORUM = {500, 1, 40, 200};

/* ---- helpers ------------------------------------------------------------------------------------------ */

typedef struct {
    float *x, *bulk, *p0, *dout;
} t_inputs;

/* The driver's inputs: x = randn - 2, bulk and p0 uniform in [p_lo, 1) (never 0), dout ~ N(0, 1). */
static void make_inputs(const lc_dims *d, uint64_t seed, float p_lo, t_inputs *in)
{
    rng r;
    rng_seed(&r, seed);
    in->x = host_alloc_array(lc_x_count(d), DT_F32, "test: x");
    in->bulk = host_alloc_array(lc_bulk_count(d), DT_F32, "test: bulk");
    in->p0 = host_alloc_array(lc_p0_count(d), DT_F32, "test: p0");
    in->dout = host_alloc_array(lc_out_count(d), DT_F32, "test: dout");
    rng_fill_normal_f32(&r, in->x, lc_x_count(d), -2.0f, 1.0f);
    rng_fill_uniform_f32(&r, in->bulk, lc_bulk_count(d), p_lo, 1.0f);
    rng_fill_uniform_f32(&r, in->p0, lc_p0_count(d), p_lo, 1.0f);
    rng_fill_normal_f32(&r, in->dout, lc_out_count(d), 0.0f, 1.0f);
}

static void free_inputs(t_inputs *in)
{
    host_free(in->x);
    host_free(in->bulk);
    host_free(in->p0);
    host_free(in->dout);
}

static void alloc_outputs(const lc_dims *d, lc_outputs *o)
{
    o->out = host_alloc_array(lc_out_count(d), DT_F32, "test: out");
    o->dx = host_alloc_array(lc_x_count(d), DT_F32, "test: dx");
    o->dbulk = host_alloc_array(lc_bulk_count(d), DT_F32, "test: dbulk");
    o->dp0 = host_alloc_array(lc_p0_count(d), DT_F32, "test: dp0");
}

static void free_outputs(lc_outputs *o)
{
    host_free(o->out);
    host_free(o->dx);
    host_free(o->dbulk);
    host_free(o->dp0);
}

static void run(lc_impl impl, const lc_dims *d, const t_inputs *in, lc_outputs *o, impl_row *row)
{
    lc_inputs li = {in->x, in->bulk, in->p0, in->dout};
    memset(row, 0, sizeof *row);
    alloc_outputs(d, o);
    *row = lc_run(impl, d, &li, o);
}

static double max_abs_f64(const double *a, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

/* err_lz from the header comment */
static double lz_err(const lc_dims *d, double max_lz)
{
    return 2.0 * (double)d->v * EPS32 * (max_lz + sqrt((double)d->c));
}

static void expect_close(const char *what, const void *x, dtype tx, const void *ref, dtype tref, size_t n,
                         double atol, double rtol)
{
    compare_result r = compare_buffers(x, tx, ref, tref, n, atol, rtol);
    ck_assert_msg(r.failures == 0,
                  "%s: %zu of %zu elements outside atol %.3g + rtol %.3g |ref|; worst index %zu, |x - ref| = %.3g "
                  "(%.6g vs %.6g)",
                  what, r.failures, n, atol, rtol, r.worst, r.max_abs, dtype_load(x, tx, r.worst),
                  dtype_load(ref, tref, r.worst));
}

/* An fp32 implementation's four results against an f64 reference (scale 1) or another fp32 run (scale 2). */
static void expect_results(const char *who, const lc_dims *d, const lc_outputs *o, const void *out_ref,
                           const void *dx_ref, const void *dbulk_ref, const void *dp0_ref, dtype tref, double max_lz,
                           double scale)
{
    char what[96];
    double e = scale * lz_err(d, max_lz), delta = 3.0 * e;
    const void *refs[4] = {out_ref, dx_ref, dbulk_ref, dp0_ref};
    const float *xs[4] = {o->out, o->dx, o->dbulk, o->dp0};
    size_t ns[4] = {lc_out_count(d), lc_x_count(d), lc_bulk_count(d), lc_p0_count(d)};
    const char *names[4] = {"out", "dx", "dbulk", "dp0"};
    for (int q = 0; q < 4; q++) {
        double mref = 0.0;
        for (size_t i = 0; i < ns[q]; i++) mref = fmax(mref, fabs(dtype_load(refs[q], tref, i)));
        snprintf(what, sizeof what, "%s %s", who, names[q]);
        if (q == 0) expect_close(what, xs[q], DT_F32, refs[q], tref, ns[q], e, 0.0);
        else expect_close(what, xs[q], DT_F32, refs[q], tref, ns[q], delta * mref, delta);
    }
}

/* ---- exact references at tiny ------------------------------------------------------------------------ */

START_TEST(test_reference_matches_bruteforce)
{
    /* Two double computations of the same numbers by different routes (recursion vs enumeration): they agree
     * to rounding in double, 1e-12 relative with room for the ~c^v summation order differences. */
    t_inputs in;
    make_inputs(&TINY, 11, 1e-3f, &in);
    lc_ref_result bf, ref;
    lc_bruteforce(&TINY, in.x, in.bulk, in.p0, in.dout, &bf);
    lc_reference(&TINY, in.x, in.bulk, in.p0, in.dout, &ref);
    expect_close("reference out", ref.out, DT_F64, bf.out, DT_F64, lc_out_count(&TINY), 1e-12, 1e-12);
    expect_close("reference dx", ref.dx, DT_F64, bf.dx, DT_F64, lc_x_count(&TINY), 1e-12, 1e-12);
    expect_close("reference dbulk", ref.dbulk, DT_F64, bf.dbulk, DT_F64, lc_bulk_count(&TINY), 1e-12, 1e-12);
    expect_close("reference dp0", ref.dp0, DT_F64, bf.dp0, DT_F64, lc_p0_count(&TINY), 1e-12, 1e-12);
    lc_reference_free(&bf);
    lc_reference_free(&ref);
    free_inputs(&in);
}
END_TEST

static void check_vs_bruteforce(lc_impl impl, const lc_dims *d, uint64_t seed)
{
    t_inputs in;
    make_inputs(d, seed, 1e-3f, &in);
    lc_ref_result bf;
    lc_bruteforce(d, in.x, in.bulk, in.p0, in.dout, &bf);
    lc_outputs o;
    impl_row row;
    run(impl, d, &in, &o, &row);
    expect_results(lc_impl_name(impl), d, &o, bf.out, bf.dx, bf.dbulk, bf.dp0, DT_F64,
                   max_abs_f64(bf.out, lc_out_count(d)), 1.0);
    free_outputs(&o);
    lc_reference_free(&bf);
    free_inputs(&in);
}

START_TEST(test_naive_vs_bruteforce) { check_vs_bruteforce(LC_NAIVE, &TINY, 21); }
END_TEST

START_TEST(test_cpu_vs_bruteforce) { check_vs_bruteforce(LC_CPU, &TINY, 21); }
END_TEST

START_TEST(test_odd_levels_vs_bruteforce)
{
    /* v-1 = 5 and 7 matrices: odd counts at more than one level (5 -> 3 -> 2 -> 1, 7 -> 4 -> 2 -> 1), c = 4,
     * so a wrong carry shows; the cpu is checked on the same inputs. */
    lc_dims d6 = {3, 2, 6, 4}, d8 = {2, 1, 8, 3};
    check_vs_bruteforce(LC_NAIVE, &d6, 31);
    check_vs_bruteforce(LC_CPU, &d6, 31);
    check_vs_bruteforce(LC_NAIVE, &d8, 32);
    check_vs_bruteforce(LC_CPU, &d8, 32);
}
END_TEST

/* ---- finite differences -------------------------------------------------------------------------------- */

typedef struct {
    lc_impl impl;
    const lc_dims *d;
    t_inputs *in;
} gc_ctx;

/* sum(out * dout) in double, from the implementation's forward on the current (perturbed) inputs */
static double chain_loss(void *p)
{
    gc_ctx *g = p;
    float *out;
    if (g->impl == LC_NAIVE) {
        naive_lc_saved sv;
        out = naive_lc_forward(g->d, g->in->x, g->in->bulk, g->in->p0, LC_ODD_CARRY, &sv);
        naive_lc_release(&sv);
    } else {
        float *alpha;
        out = cpu_lc_forward(g->d, g->in->x, g->in->bulk, g->in->p0, &alpha);
        host_free(alpha);
    }
    double L = 0.0;
    for (size_t r = 0; r < lc_out_count(g->d); r++) L += (double)out[r] * g->in->dout[r];
    host_free(out);
    return L;
}

/* Central differences on fp32 forward passes, tight enough that a 0.5% error in dx fails (scaling dx by 1.005
 * in either implementation turns test_*_gradcheck red; docs/lesson-2.md reports the experiment).
 *
 * numeric = (L(p+h) - L(p-h)) / (2h) with L = sum_b dout_b out_b accumulated in double. Its error has two parts:
 *   noise:      each out_b carries an fp32 error of at most err_lz (the header), so the quotient is off by at
 *               most sum|dout_b| err_lz / h over the chains whose out moves. An x element moves one chain only:
 *               every other chain is recomputed from the same bits by the same operations, so its term cancels
 *               exactly (the double sum adds ~1e-16). bulk and p0 are shared: every chain moves.
 *   truncation: h^2/6 max|L'''| on [p-h, p+h].
 *     x:      log Z is the cumulant generating function of the indicator [j_i = j] in x_i[j], so its third
 *             derivative is that Bernoulli variable's third cumulant q(1-q)(1-2q): at most 1/(6 sqrt 3) = 0.0962.
 *     P, p0:  Z is affine in any single entry (a path uses a given transition, or p0[j], at most once), so with
 *             f = log Z, f''' = 2 (f')^3, and f' = (expected count) / P <= 1 / P. P and p0 are drawn from
 *             [0.2, 1) here: |f'''| <= 2 / (0.2 - h)^3 per chain.
 * The analytic gradient has its own fp32 error, delta = 3 err_lz relative (the header), plus delta max|grad|
 * for elements small beside their terms: that is rtol, and the last term of atol.
 *   x:       h = 0.1   (balances err_lz / h against 0.0962 h^2/6): atol = max|dout| (err_lz/h + 0.0962 h^2/6)
 *   bulk/p0: h = 4e-3  (the same balance with 2/0.196^3):          atol = sum|dout| (err_lz/h + 2/0.196^3 h^2/6)
 * At tiny with seed 41 that is an atol of a few 1e-4 for dx (the test prints it) against |dx| up to ~1: a 0.5%
 * error is 1.5e-3 on a 0.3 element. */
static void check_gradients(lc_impl impl)
{
    const lc_dims *d = &TINY;
    const double p_lo = 0.2, kappa3 = 1.0 / (6.0 * sqrt(3.0));
    t_inputs in;
    make_inputs(d, 41, (float)p_lo, &in);
    lc_outputs o;
    impl_row row;
    run(impl, d, &in, &o, &row);
    double sum_dout = 0.0, max_dout = 0.0, max_lz = 0.0;
    for (size_t r = 0; r < lc_out_count(d); r++) {
        sum_dout += fabs(in.dout[r]);
        max_dout = fmax(max_dout, fabs(in.dout[r]));
        max_lz = fmax(max_lz, fabs(o.out[r]));
    }
    double e = lz_err(d, max_lz), delta = 3.0 * e, hx = 0.1, hp = 4e-3;
    double fppp_p = 2.0 / pow(p_lo - hp, 3);
    gc_ctx ctx = {impl, d, &in};
    struct {
        const char *name;
        float *param;
        const float *analytic;
        size_t n;
        double h, atol;
    } cases[3] = {
        {"dx", in.x, o.dx, lc_x_count(d), hx, max_dout * (e / hx + kappa3 * hx * hx / 6)},
        {"dbulk", in.bulk, o.dbulk, lc_bulk_count(d), hp, sum_dout * (e / hp + fppp_p * hp * hp / 6)},
        {"dp0", in.p0, o.dp0, lc_p0_count(d), hp, sum_dout * (e / hp + fppp_p * hp * hp / 6)},
    };
    for (int q = 0; q < 3; q++) {
        double mref = 0.0;
        for (size_t i = 0; i < cases[q].n; i++) mref = fmax(mref, fabs(cases[q].analytic[i]));
        double atol = cases[q].atol + delta * mref;
        gradcheck_result g = gradcheck(chain_loss, &ctx, cases[q].param, DT_F32, cases[q].analytic, DT_F32,
                                       cases[q].n, 1, cases[q].h, atol, delta);
        printf("  gradcheck %s %s: %zu checked, worst |analytic - numeric| = %.2e (atol %.2e, rtol %.1e; "
               "max|grad| %.2f)\n", lc_impl_name(impl), cases[q].name, g.checked, g.max_abs_err, atol, delta, mref);
        ck_assert_msg(g.failed == 0, "%s %s: %zu of %zu fail; worst index %zu analytic %.6g numeric %.6g",
                      lc_impl_name(impl), cases[q].name, g.failed, g.checked, g.worst, g.worst_analytic,
                      g.worst_numeric);
    }
    free_outputs(&o);
    free_inputs(&in);
}

START_TEST(test_naive_gradcheck) { check_gradients(LC_NAIVE); }
END_TEST

START_TEST(test_cpu_gradcheck) { check_gradients(LC_CPU); }
END_TEST

/* ---- agreement at small -------------------------------------------------------------------------------- */

START_TEST(test_naive_vs_cpu_small)
{
    /* Two fp32 implementations with different rounding: twice the single-implementation tolerance. */
    t_inputs in;
    make_inputs(&SMALL, 51, 1e-3f, &in);
    lc_outputs a, b;
    impl_row ra, rb;
    run(LC_NAIVE, &SMALL, &in, &a, &ra);
    run(LC_CPU, &SMALL, &in, &b, &rb);
    double max_lz = 0.0;
    for (size_t r = 0; r < lc_out_count(&SMALL); r++) max_lz = fmax(max_lz, fabs(b.out[r]));
    expect_results("naive vs cpu", &SMALL, &a, b.out, b.dx, b.dbulk, b.dp0, DT_F32, max_lz, 2.0);
    free_outputs(&a);
    free_outputs(&b);
    free_inputs(&in);
}
END_TEST

START_TEST(test_cpu_vs_reference_small)
{
    /* The f64 forward-backward (checked against the brute force above) at the forum's first example. */
    t_inputs in;
    make_inputs(&SMALL, 52, 1e-3f, &in);
    lc_ref_result ref;
    lc_reference(&SMALL, in.x, in.bulk, in.p0, in.dout, &ref);
    lc_outputs o;
    impl_row row;
    run(LC_CPU, &SMALL, &in, &o, &row);
    expect_results("cpu vs f64", &SMALL, &o, ref.out, ref.dx, ref.dbulk, ref.dp0, DT_F64,
                   max_abs_f64(ref.out, lc_out_count(&SMALL)), 1.0);
    free_outputs(&o);
    lc_reference_free(&ref);
    free_inputs(&in);
}
END_TEST

START_TEST(test_naive_clamp_inactive)
{
    /* The tolerances above assume the forum's clamp(.., 1e-10) never fires at the lesson's inputs. */
    t_inputs in;
    make_inputs(&SMALL, 53, 1e-3f, &in);
    naive_lc_saved sv;
    float *out = naive_lc_forward(&SMALL, in.x, in.bulk, in.p0, LC_ODD_CARRY, &sv);
    float lo = 1.0f;
    size_t N = lc_rows(&SMALL), C2 = SMALL.c * SMALL.c;
    for (int l = 0; l < sv.levels; l++)
        for (size_t e = 0; e < N * (sv.m[l] / 2) * C2; e++) lo = fminf(lo, fminf(sv.e1[l][e], sv.e2[l][e]));
    ck_assert_msg(lo > 1e-10f, "smallest exp(M - max) is %g: the clamp fired", (double)lo);
    naive_lc_release(&sv);
    host_free(out);
    free_inputs(&in);
}
END_TEST

/* ---- memory: formula == tracker ------------------------------------------------------------------------ */

static void check_memory(lc_impl impl, const lc_dims *d)
{
    t_inputs in;
    make_inputs(d, 61, 1e-3f, &in);
    lc_outputs o;
    impl_row row;
    run(impl, d, &in, &o, &row);
    lc_memory m = lc_predict(impl, d);
    ck_assert_msg(row.peak_bytes == m.peak, "%s n=%zu v=%zu c=%zu: peak tracker %zu formula %zu",
                  lc_impl_name(impl), d->n, d->v, d->c, row.peak_bytes, m.peak);
    ck_assert_msg(row.forward_live_bytes == m.forward_live, "%s n=%zu v=%zu c=%zu: live tracker %zu formula %zu",
                  lc_impl_name(impl), d->n, d->v, d->c, row.forward_live_bytes, m.forward_live);
    free_outputs(&o);
    free_inputs(&in);
}

START_TEST(test_memory_tiny_small)
{
    lc_dims odd_t = {3, 2, 7, 5}; /* t > 1 and an odd level 6 -> 3 -> 2 */
    const lc_dims *sizes[3] = {&TINY, &SMALL, &odd_t};
    for (int s = 0; s < 3; s++) {
        check_memory(LC_NAIVE, sizes[s]);
        check_memory(LC_CPU, sizes[s]);
    }
}
END_TEST

START_TEST(test_memory_forum_cpu)
{
    /* cpu runs at the forum's size (a few tens of MB); naive only predicts: 14.6 GiB, over half this RAM. The
     * naive numbers are the ones docs/lesson-2.md quotes. */
    check_memory(LC_CPU, &FORUM);
    lc_memory nm = naive_lc_memory(&FORUM), cm = cpu_lc_memory(&FORUM);
    ck_assert_uint_eq(nm.peak, 15683840800u);
    ck_assert_uint_eq(nm.forward_live, 15363842800u);
    ck_assert_uint_eq(cm.peak, 46089600u);
    ck_assert_msg(nm.peak / cm.peak >= 100, "naive/cpu peak ratio %zu", nm.peak / cm.peak);
    /* the target at medium: cpu's peak at least 100x below naive's (the formulas equal the tracker,
     * which test_memory_formula_equals_tracker checks at the sizes it can run) */
    lc_dims medium = {100, 1, 40, 100};
    size_t ratio = naive_lc_memory(&medium).peak / cpu_lc_memory(&medium).peak;
    ck_assert_msg(ratio >= 100, "naive/cpu peak ratio at medium %zu", ratio);
}
END_TEST

START_TEST(test_memory_closed_form_equals_walk)
{
    /* naive_lc_memory's closed form against the tensor-by-tensor walk of the same dataflow: every v from 2 (no
     * tree) to 70 (odd counts at one, several or no levels: 5 -> 3 -> 2, 7 -> 4 -> 2, 2^k), with c = 1 (where
     * the vectors weigh as much as the matrices), c small and large against v (forward vs backward peak), t > 1
     * and n = 1; then the forum's and medium sizes. */
    static const size_t ns[] = {1, 2, 7}, ts[] = {1, 3}, cs[] = {1, 2, 3, 5, 40, 200};
    size_t checked = 0;
    for (size_t v = 2; v <= 70; v++)
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 2; b++)
                for (size_t k = 0; k < 6; k++) {
                    lc_dims d = {ns[a], ts[b], v, cs[k]};
                    lc_memory f = naive_lc_memory(&d), w = naive_lc_memory_walk(&d);
                    ck_assert_msg(f.peak == w.peak && f.forward_live == w.forward_live,
                                  "n=%zu t=%zu v=%zu c=%zu: closed form peak %zu live %zu, walk peak %zu live %zu", d.n,
                                  d.t, d.v, d.c, f.peak, f.forward_live, w.peak, w.forward_live);
                    checked++;
                }
    const lc_dims big[] = {{500, 1, 40, 200}, {100, 1, 40, 100}, {3, 2, 7, 5}, {10, 1, 6, 40}};
    for (int i = 0; i < 4; i++) {
        lc_memory f = naive_lc_memory(&big[i]), w = naive_lc_memory_walk(&big[i]);
        ck_assert_uint_eq(f.peak, w.peak);
        ck_assert_uint_eq(f.forward_live, w.forward_live);
    }
    ck_assert_uint_eq(checked, 69 * 36);
}
END_TEST

START_TEST(test_memory_overflow_saturates)
{
    /* dims from the command line may overflow every product: the formulas saturate instead of wrapping */
    lc_dims huge = {2147483647, 2147483647, 2147483647, 2147483647};
    ck_assert_uint_eq(naive_lc_memory(&huge).peak, SIZE_MAX);
    ck_assert_uint_eq(cpu_lc_memory(&huge).peak, SIZE_MAX);
    ck_assert_uint_eq(cuda_lc_memory_v2(&huge).peak, SIZE_MAX);
}
END_TEST

/* ---- the forum's zero padding ------------------------------------------------------------------------- */

START_TEST(test_zero_padding_is_wrong_for_odd_levels)
{
    /* v-1 = 3 matrices: the forum pads to 4 with a zero matrix, i.e. exp(0) = the all-ones matrix J, and
     * computes log(p0^T D0 P0 D1 P1 D2 P2 J D3 1) = log(p0^T D0 P0 D1 P1 D2 P2 1) + log(sum_k exp(x3[k])):
     * the last variable's weights enter as a sum, detached from the path. The carry is exact. */
    lc_dims d = {2, 1, 4, 3};
    t_inputs in;
    make_inputs(&d, 71, 1e-3f, &in);
    lc_ref_result bf;
    lc_bruteforce(&d, in.x, in.bulk, in.p0, in.dout, &bf);
    naive_lc_saved sv;
    float *carry = naive_lc_forward(&d, in.x, in.bulk, in.p0, LC_ODD_CARRY, &sv);
    naive_lc_release(&sv);
    float *padded = naive_lc_forward(&d, in.x, in.bulk, in.p0, LC_ODD_ZERO_PAD, &sv);
    naive_lc_release(&sv);

    /* what the padded chain is, by brute force: D_3 replaced by the identity (x3 = 0), then + log sum exp x3 */
    float *x_id = host_alloc_array(lc_x_count(&d), DT_F32, "test: x with x3 = 0");
    memcpy(x_id, in.x, lc_x_count(&d) * sizeof(float));
    double *expect = host_alloc_array(lc_out_count(&d), DT_F64, "test: padded chain, expected");
    for (size_t r = 0; r < lc_rows(&d); r++)
        for (size_t k = 0; k < d.c; k++) x_id[(r * d.v + d.v - 1) * d.c + k] = 0.0f;
    lc_ref_result bf_id;
    lc_bruteforce(&d, x_id, in.bulk, in.p0, in.dout, &bf_id);
    for (size_t r = 0; r < lc_rows(&d); r++) {
        double s = 0.0;
        for (size_t k = 0; k < d.c; k++) s += exp((double)in.x[(r * d.v + d.v - 1) * d.c + k]);
        expect[r] = bf_id.out[r] + log(s);
    }

    /* + 5: the padded value exceeds log Z by log sum_k exp(x3[k]), and the error estimate scales with the
     * magnitude of what is summed; with x ~ N(-2, 1) and c = 3 that term is well inside 5 in absolute value. */
    double tol = lz_err(&d, max_abs_f64(bf.out, lc_out_count(&d)) + 5.0);
    expect_close("carry vs brute force", carry, DT_F32, bf.out, DT_F64, lc_out_count(&d), tol, 0.0);
    expect_close("zero pad vs log(chain 1) + log sum exp x3", padded, DT_F32, expect, DT_F64, lc_out_count(&d), tol,
                 0.0);
    for (size_t r = 0; r < lc_rows(&d); r++)
        ck_assert_msg(fabs(padded[r] - bf.out[r]) > 0.1, "row %zu: zero padding %.6f vs true %.6f", r,
                      (double)padded[r], bf.out[r]);
    host_free(x_id);
    host_free(expect);
    host_free(carry);
    host_free(padded);
    lc_reference_free(&bf);
    lc_reference_free(&bf_id);
    free_inputs(&in);
}
END_TEST

START_TEST(test_zero_padding_harmless_for_even_levels)
{
    /* v-1 = 4 -> 2 -> 1: no level is odd, the padding never happens, and the two modes run the same
     * operations in the same order: the results are equal bit for bit (a determinism check, so ==). */
    t_inputs in;
    make_inputs(&TINY, 72, 1e-3f, &in);
    naive_lc_saved sv;
    float *a = naive_lc_forward(&TINY, in.x, in.bulk, in.p0, LC_ODD_CARRY, &sv);
    naive_lc_release(&sv);
    float *b = naive_lc_forward(&TINY, in.x, in.bulk, in.p0, LC_ODD_ZERO_PAD, &sv);
    naive_lc_release(&sv);
    ck_assert(memcmp(a, b, lc_out_count(&TINY) * sizeof(float)) == 0);
    host_free(a);
    host_free(b);
    free_inputs(&in);
}
END_TEST

/* ---- the command line (build/lesson2, run from the repository root like `make test` does) ---------------- */

/* Runs build/lesson2 with args, stdout+stderr into a buffer; returns the exit status. */
static int run_lesson2(const char *args, char *out, size_t len) { return run_lesson("./build/lesson2", args, out, len); }

START_TEST(cli_rejects_bad_input)
{
    /* lesson 2's own rules; the shared command line is tested once in test_lessons.c */
    static const bad_input_case cases[] = {
        {"--dims v=1", "the chain needs at least 2 variables"},
        {"--dims n=2147483647,t=2147483647,v=2147483647,c=2147483647", "overflow"},
        {"--dims n=100000,c=2000 --mem-limit 1G", "over --mem-limit"},
    };
    assert_rejects("./build/lesson2", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(cli_nothing_ran_exits_nonzero)
{
    /* the forum's size with naive alone: over the default limit, so nothing runs */
    char out[16384];
    int rc = run_lesson2("--size forum --impl naive", out, sizeof out);
    ck_assert_output(rc == 4, out, "exit %d, expected 4 (nothing ran)", rc);
    ck_assert_output(strstr(out, "naive    skipped: predicted peak 15,683,840,800 bytes") != NULL, out, "no naive skip line");
    ck_assert_output(strstr(out, "lesson2: no implementation ran") != NULL, out, "no 'no implementation ran' line");
}
END_TEST

START_TEST(cli_csv_rows_are_byte_exact)
{
    /* the exact bytes and allocation counts lesson 2 has printed since it was written */
    static const char *const rows[] = {"2,naive,tiny,\"n=2,t=1,v=5,c=3\",2056,1772,66,",
                                       "2,cpu,tiny,\"n=2,t=1,v=5,c=3\",680,404,17,"};
    assert_csv_rows("./build/lesson2", "--size tiny --impl naive,cpu --seed 5", rows, 2, ",cpu,");
}
END_TEST

/* ---- suite --------------------------------------------------------------------------------------------- */

/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN in chain (n,t) reaches that chain and dbulk[t], dp0[t] only; -inf is log 0 and keeps everything finite): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_naive_nan) { ck_assert_uint_eq(nan_lesson2("naive", NAN), 0); }
END_TEST
/* Not naive with -inf: the forum's max shift takes the max of a column that is all -inf (every entry adds that
 * state's x) and subtracts it, -inf - -inf = NaN -- in PyTorch as here; naive is the forum's code, faithfully. */
START_TEST(nan_rule_cpu_nan) { ck_assert_uint_eq(nan_lesson2("cpu", NAN), 0); }
END_TEST
START_TEST(nan_rule_cpu_neg_inf) { ck_assert_uint_eq(nan_lesson2("cpu", -INFINITY), 0); }
END_TEST

static Suite *lesson2_suite(void)
{
    Suite *s = suite_create("lesson2");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, test_reference_matches_bruteforce);
    tcase_add_test(exact, test_naive_vs_bruteforce);
    tcase_add_test(exact, test_cpu_vs_bruteforce);
    tcase_add_test(exact, test_odd_levels_vs_bruteforce);
    suite_add_tcase(s, exact);

    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_naive_gradcheck);
    tcase_add_test(grad, test_cpu_gradcheck);
    suite_add_tcase(s, grad);

    TCase *agree = tcase_create("agreement");
    tcase_add_test(agree, test_naive_vs_cpu_small);
    tcase_add_test(agree, test_cpu_vs_reference_small);
    tcase_add_test(agree, test_naive_clamp_inactive);
    suite_add_tcase(s, agree);

    TCase *mem = tcase_create("memory");
    tcase_add_test(mem, test_memory_tiny_small);
    tcase_add_test(mem, test_memory_forum_cpu);
    tcase_add_test(mem, test_memory_closed_form_equals_walk);
    tcase_add_test(mem, test_memory_overflow_saturates);
    tcase_set_timeout(mem, 60); /* the forum-size cpu run takes a few seconds on 2 cores */
    suite_add_tcase(s, mem);

    TCase *pad = tcase_create("zero_padding");
    tcase_add_test(pad, test_zero_padding_is_wrong_for_odd_levels);
    tcase_add_test(pad, test_zero_padding_harmless_for_even_levels);
    suite_add_tcase(s, pad);

    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, cli_rejects_bad_input);
    tcase_add_test(cli, cli_nothing_ran_exits_nonzero);
    tcase_add_test(cli, cli_csv_rows_are_byte_exact);
    suite_add_tcase(s, cli);
    TCase *nanc = tcase_create("nan-inf");
    tcase_add_test(nanc, nan_rule_naive_nan);
    tcase_add_test(nanc, nan_rule_cpu_nan);
    tcase_add_test(nanc, nan_rule_cpu_neg_inf);
    suite_add_tcase(s, nanc);
    return s;
}

int main(void) { return check_main(lesson2_suite()); }
