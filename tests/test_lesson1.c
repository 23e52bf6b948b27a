/* test_lesson1.c - lesson 1's numerical and memory checks.
 *
 *   gradients   central differences (double) of sum(out * dout) against naive's and cpu's backward, tiny size
 *   reference   every output and gradient within the proven float32 summation bound of a double reference
 *   agreement   naive vs cpu at the small size, max rel err <= 1e-5
 *   memory      the forum's 1,107,427,328 bytes, the einsum's ~34 MB, formulas saturate instead of wrapping
 * What every lesson must do (formula == tracker at tiny and small, validation, determinism, no leaks, the
 * command line) is tested once for all lessons in test_lessons.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "gradcheck.h"
#include "rng.h"
#include "track.h"
#include "../naive/bmm_broadcast.h"
#include "../optimized/bmm_grouped.h"
#include "../lessons/bmm_reference.h"
#include "bmm_testing.h"
#include "nan_testing.h"

static const bmm_dims TINY = {3, 2, 4, 5}, SMALL = {512, 8, 64, 64}, FORUM = {8192, 8, 64, 64};

/* Fresh random inputs (tracked), never zeros. */
typedef struct {
    bmm_dims d;
    float *x, *W, *dout;
} problem;

static problem make_problem(bmm_dims d, uint64_t seed)
{
    problem p = {d, NULL, NULL, NULL};
    rng r;
    rng_seed(&r, seed);
    p.x = host_alloc_array(bmm_x_count(&d), DT_F32, "test x");
    p.W = host_alloc_array(bmm_w_count(&d), DT_F32, "test W");
    p.dout = host_alloc_array(bmm_out_count(&d), DT_F32, "test dout");
    rng_fill_normal_f32(&r, p.x, bmm_x_count(&d), 0.0f, 1.0f);
    rng_fill_normal_f32(&r, p.W, bmm_w_count(&d), 0.0f, 0.5f);
    rng_fill_normal_f32(&r, p.dout, bmm_out_count(&d), 0.0f, 1.0f);
    return p;
}

static void free_problem(problem *p)
{
    host_free(p->x);
    host_free(p->W);
    host_free(p->dout);
}

static bmm_outputs alloc_outputs(const bmm_dims *d)
{
    bmm_outputs o;
    o.out = host_alloc_array(bmm_out_count(d), DT_F32, "test result out");
    o.dx = host_alloc_array(bmm_x_count(d), DT_F32, "test result dx");
    o.dW = host_alloc_array(bmm_w_count(d), DT_F32, "test result dW");
    return o;
}

static void free_outputs(bmm_outputs *o)
{
    host_free(o->out);
    host_free(o->dx);
    host_free(o->dW);
}

/* ---- gradient checks ------------------------------------------------------------------------------------ */

typedef struct {
    bmm_impl impl;
    problem *p;
} loss_ctx;

/* sum(out * dout) in double, out from the implementation's own forward pass */
static double loss_of(void *vctx)
{
    loss_ctx *c = vctx;
    const bmm_dims *d = &c->p->d;
    naive_bmm_saved saved = {NULL};
    float *out = c->impl == BMM_NAIVE ? naive_bmm_forward(d, c->p->x, c->p->W, &saved)
                                      : cpu_bmm_forward(d, c->p->x, c->p->W);
    double L = 0;
    for (size_t i = 0; i < bmm_out_count(d); i++) L += (double)out[i] * c->p->dout[i];
    host_free(out);
    naive_bmm_discard(&saved);
    return L;
}

static void check_gradients(bmm_impl impl)
{
    problem p = make_problem(TINY, 11 + impl);
    naive_bmm_saved saved = {NULL};
    float *out, *dx, *dW;
    if (impl == BMM_NAIVE) {
        out = naive_bmm_forward(&p.d, p.x, p.W, &saved);
        naive_bmm_backward(&p.d, p.x, &saved, p.dout, &dx, &dW);
    } else {
        out = cpu_bmm_forward(&p.d, p.x, p.W);
        cpu_bmm_backward(&p.d, p.x, p.W, p.dout, &dx, &dW);
    }
    loss_ctx ctx = {impl, &p};
    /* The loss is linear in x for fixed W and in W for fixed x, so the central difference has no truncation
     * error and a large step is safe: h = 0.25. What remains is float32 rounding of the few outputs a
     * perturbation touches (<= N for an x element, <= B for a W element): about (K+2) * 2^-24 * |out||dout|
     * / h, below 1e-6 here. atol = rtol = 1e-5 leaves a margin of ten, and a wrong index or a missing
     * transpose is off by O(1). */
    gradcheck_result gx = gradcheck(loss_of, &ctx, p.x, DT_F32, dx, DT_F32, bmm_x_count(&p.d), 1, 0.25, 1e-5, 1e-5);
    gradcheck_result gw = gradcheck(loss_of, &ctx, p.W, DT_F32, dW, DT_F32, bmm_w_count(&p.d), 1, 0.25, 1e-5, 1e-5);
    ck_assert_uint_eq(gx.checked, bmm_x_count(&p.d));
    ck_assert_uint_eq(gw.checked, bmm_w_count(&p.d));
    ck_assert_msg(gx.failed == 0, "%s dx: %zu of %zu elements fail; worst [%zu] analytic %.9g numeric %.9g",
                  bmm_impl_name(impl), gx.failed, gx.checked, gx.worst, gx.worst_analytic, gx.worst_numeric);
    ck_assert_msg(gw.failed == 0, "%s dW: %zu of %zu elements fail; worst [%zu] analytic %.9g numeric %.9g",
                  bmm_impl_name(impl), gw.failed, gw.checked, gw.worst, gw.worst_analytic, gw.worst_numeric);
    host_free(out);
    host_free(dx);
    host_free(dW);
    free_problem(&p);
}

START_TEST(gradcheck_naive_tiny) { check_gradients(BMM_NAIVE); }
END_TEST

START_TEST(gradcheck_cpu_tiny) { check_gradients(BMM_CPU); }
END_TEST

/* ---- against the double reference ---------------------------------------------------------------------- */

static void check_against_reference(bmm_impl impl, bmm_dims d)
{
    problem p = make_problem(d, 21 + impl);
    bmm_inputs in = {p.x, p.W, p.dout};
    bmm_outputs res = alloc_outputs(&d);
    bmm_run(impl, &d, &in, &res);

    bmm_reference_result ref;
    bmm_reference(&d, p.x, p.W, p.dout, &ref);
    /* out sums K products, dx sums N, dW sums B (see bmm_reference.h for the bound) */
    size_t bo = bmm_count_outside_bound(res.out, ref.out, ref.out_abs, bmm_out_count(&d), d.K);
    size_t bx = bmm_count_outside_bound(res.dx, ref.dx, ref.dx_abs, bmm_x_count(&d), d.N);
    size_t bw = bmm_count_outside_bound(res.dW, ref.dW, ref.dW_abs, bmm_w_count(&d), d.B);
    ck_assert_msg(bo == 0 && bx == 0 && bw == 0, "%s at B=%zu: outside the float32 bound: out %zu, dx %zu, dW %zu",
                  bmm_impl_name(impl), d.B, bo, bx, bw);
    bmm_reference_free(&ref);
    free_outputs(&res);
    free_problem(&p);
}

START_TEST(reference_naive_tiny) { check_against_reference(BMM_NAIVE, TINY); }
END_TEST
START_TEST(reference_cpu_tiny) { check_against_reference(BMM_CPU, TINY); }
END_TEST
START_TEST(reference_naive_small) { check_against_reference(BMM_NAIVE, SMALL); }
END_TEST
START_TEST(reference_cpu_small) { check_against_reference(BMM_CPU, SMALL); }
END_TEST

START_TEST(naive_vs_cpu_small)
{
    problem p = make_problem(SMALL, 31);
    bmm_inputs in = {p.x, p.W, p.dout};
    bmm_outputs a = alloc_outputs(&SMALL), b = alloc_outputs(&SMALL);
    bmm_run(BMM_NAIVE, &SMALL, &in, &a);
    bmm_run(BMM_CPU, &SMALL, &in, &b);
    /* Both compute the same float32 sums; only the order of additions may differ. A random-walk rounding
     * estimate, sqrt(L) * 2^-24 * (sum|terms| / max|result|), is about 6e-6 for dW's L = B = 512 terms and
     * smaller for out and dx (L = 64): 1e-5 is the bound and holds with that margin. */
    double e_out = max_rel_err(b.out, DT_F32, a.out, DT_F32, bmm_out_count(&SMALL));
    double e_dx = max_rel_err(b.dx, DT_F32, a.dx, DT_F32, bmm_x_count(&SMALL));
    double e_dW = max_rel_err(b.dW, DT_F32, a.dW, DT_F32, bmm_w_count(&SMALL));
    ck_assert_msg(e_out <= 1e-5 && e_dx <= 1e-5 && e_dW <= 1e-5, "max rel err out %g dx %g dW %g", e_out, e_dx,
                  e_dW);
    free_outputs(&a);
    free_outputs(&b);
    free_problem(&p);
}
END_TEST

/* ---- memory: formula == tracker -------------------------------------------------------------------------- */

static impl_row measure(bmm_impl impl, bmm_dims d)
{
    problem p = make_problem(d, 41);
    bmm_inputs in = {p.x, p.W, p.dout};
    bmm_outputs res = alloc_outputs(&d);
    impl_row row = bmm_run(impl, &d, &in, &res); /* asserts the session freed everything */
    free_outputs(&res);
    free_problem(&p);
    return row;
}

START_TEST(forum_naive_keeps_1107427328_bytes)
{
    /* The figure torch.cuda.memory_allocated() printed in the forum: x 16 MiB + W 128 KiB + the expanded
     * copy of W 1 GiB + out 16 MiB. */
    ck_assert_uint_eq(naive_bmm_memory(&FORUM).forward_live, 1107427328u);
    impl_row row = measure(BMM_NAIVE, FORUM);
    ck_assert_uint_eq(row.forward_live_bytes, 1107427328u);
    ck_assert_uint_eq(row.peak_bytes, naive_bmm_memory(&FORUM).peak);
    ck_assert_uint_eq(track_label_peak(MEM_HOST, "W_expanded (B*G,K,N) saved for backward"), 1073741824u);
}
END_TEST

START_TEST(forum_cpu_keeps_inputs_and_output_only)
{
    /* x 16 MiB + W 128 KiB + out 16 MiB: the ~34 MB of the forum's einsum version */
    impl_row row = measure(BMM_CPU, FORUM);
    ck_assert_uint_eq(row.forward_live_bytes, 16777216u + 131072u + 16777216u);
    ck_assert_uint_eq(row.peak_bytes, cpu_bmm_memory(&FORUM).peak);
}
END_TEST

START_TEST(formula_saturates_instead_of_wrapping)
{
    bmm_dims huge = {2147483647, 2147483647, 2147483647, 2147483647};
    ck_assert_uint_eq(naive_bmm_memory(&huge).peak, SIZE_MAX);
    ck_assert_uint_eq(cpu_bmm_memory(&huge).peak, SIZE_MAX);
}
END_TEST

/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN or +Inf in row b of x reaches out[b,g,:] and dW[g,k,:] only): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_naive_nan) { ck_assert_uint_eq(nan_lesson1("naive", NAN), 0); }
END_TEST
START_TEST(nan_rule_naive_inf) { ck_assert_uint_eq(nan_lesson1("naive", INFINITY), 0); }
END_TEST
START_TEST(nan_rule_cpu_nan) { ck_assert_uint_eq(nan_lesson1("cpu", NAN), 0); }
END_TEST
START_TEST(nan_rule_cpu_inf) { ck_assert_uint_eq(nan_lesson1("cpu", INFINITY), 0); }
END_TEST

static Suite *lesson1_suite(void)
{
    Suite *s = suite_create("lesson1");
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, gradcheck_naive_tiny);
    tcase_add_test(grad, gradcheck_cpu_tiny);
    suite_add_tcase(s, grad);

    TCase *num = tcase_create("numerics");
    tcase_add_test(num, reference_naive_tiny);
    tcase_add_test(num, reference_cpu_tiny);
    tcase_add_test(num, reference_naive_small);
    tcase_add_test(num, reference_cpu_small);
    tcase_add_test(num, naive_vs_cpu_small);
    tcase_set_timeout(num, 60);
    suite_add_tcase(s, num);

    TCase *mem = tcase_create("memory");
    tcase_add_test(mem, forum_naive_keeps_1107427328_bytes);
    tcase_add_test(mem, forum_cpu_keeps_inputs_and_output_only);
    tcase_add_test(mem, formula_saturates_instead_of_wrapping);
    tcase_set_timeout(mem, 120);
    suite_add_tcase(s, mem);
    TCase *nanc = tcase_create("nan-inf");
    tcase_add_test(nanc, nan_rule_naive_nan);
    tcase_add_test(nanc, nan_rule_naive_inf);
    tcase_add_test(nanc, nan_rule_cpu_nan);
    tcase_add_test(nanc, nan_rule_cpu_inf);
    suite_add_tcase(s, nanc);

    return s;
}

int main(void) { return check_main(lesson1_suite()); }
