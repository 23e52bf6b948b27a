/* test_lesson1.c - lesson 1's numerical and memory checks.
 *
 *   gradients   central differences (double) of sum(out * dout) against naive's and cpu's backward, tiny size
 *   reference   every output and gradient within the proven float32 summation bound of a double reference
 *   agreement   naive vs cpu at the small size, max rel err <= 1e-5
 *   memory      each formula equals the tracker (peak, live after forward, allocation count); the forum's
 *               1,107,427,328 bytes
 *   cli         bad input exits 2 with one message; --csv, --dump and --mem-limit do what they say
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/compare.h"
#include "../kernels/gradcheck.h"
#include "../kernels/rng.h"
#include "../kernels/track.h"
#include "../lessons/bmm_session.h"
#include "../naive/bmm_broadcast.h"
#include "../optimized/bmm_grouped.h"
#include "bmm_reference.h"
#include "cli_harness.h"

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
    impl_row row;
    memset(&row, 0, sizeof row);
    bmm_run(impl, &d, &in, &res, &row, 0);

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
    impl_row ra, rb;
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    bmm_run(BMM_NAIVE, &SMALL, &in, &a, &ra, 0);
    bmm_run(BMM_CPU, &SMALL, &in, &b, &rb, 0);
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
    impl_row row;
    memset(&row, 0, sizeof row);
    size_t live_before = track_counters(MEM_HOST).live_bytes;
    bmm_run(impl, &d, &in, &res, &row, 0);
    ck_assert_uint_eq(track_counters(MEM_HOST).live_bytes, live_before); /* the session freed everything */
    free_outputs(&res);
    free_problem(&p);
    return row;
}

static void check_formula(bmm_impl impl, bmm_dims d, size_t allocs)
{
    impl_row row = measure(impl, d);
    bmm_memory m = bmm_predict(impl, &d);
    ck_assert_msg(row.peak_bytes == m.peak, "%s peak: tracker %zu formula %zu", bmm_impl_name(impl), row.peak_bytes,
                  m.peak);
    ck_assert_msg(row.forward_live_bytes == m.forward_live, "%s forward live: tracker %zu formula %zu",
                  bmm_impl_name(impl), row.forward_live_bytes, m.forward_live);
    ck_assert_uint_eq(row.allocs, allocs);
}

/* naive: x, W, W_expanded, out | dout, dx, dW_expanded, dW. cpu: x, W, out | dout, dx, dW. */
START_TEST(formula_naive_tiny) { check_formula(BMM_NAIVE, TINY, 8); }
END_TEST
START_TEST(formula_naive_small) { check_formula(BMM_NAIVE, SMALL, 8); }
END_TEST
START_TEST(formula_cpu_tiny) { check_formula(BMM_CPU, TINY, 6); }
END_TEST
START_TEST(formula_cpu_small) { check_formula(BMM_CPU, SMALL, 6); }
END_TEST

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

/* ---- the command line ---------------------------------------------------------------------------------- */

static int run_lesson1(const char *args, char *out, size_t len) { return run_lesson("./build/lesson1", args, out, len); }

START_TEST(cli_rejects_bad_input)
{
    static const bad_input_case cases[] = {
        {"--size tiny --size small", "option --size is given twice"},
        {"--impl cpu,cpu", "'cpu' is listed twice"},
        {"--size tiny --csv README.md", "is not a lesson CSV"},
        {"--size tiny --csv /nonexistent-dir/x.csv", "cannot open --csv /nonexistent-dir/x.csv"},
        {"--size tiny --dump README.md", "--dump README.md is not a writable directory"},
        {"--frobnicate", "unknown option '--frobnicate'"},
        {"--size huge", "unknown size 'huge'"},
        {"--dims B=0", "B='0' must be an integer from 1"},
        {"--dims B=-4", "B='-4' must be an integer from 1"},
        {"--dims B=12x", "B='12x' must be an integer"},
        {"--dims Q=3", "unknown dimension 'Q'"},
        {"--dims B=2,B=3", "B is given twice"},
        {"--dims B=99999999999", "must be an integer from 1 to 2147483647"},
        {"--dims B=2147483647,G=2147483647,K=2147483647,N=2147483647", "need more than 2^64 bytes"},
        {"--dims B=2000000,G=64,K=64,N=64 --mem-limit 1G", "over --mem-limit"},
        {"--impl naive,gpu", "unknown implementation 'gpu'"},
        {"--mem-limit 4X", "--mem-limit '4X' is not a positive size"},
        {"--mem-limit 0", "is not a positive size"},
        {"--seed -1", "--seed '-1' must be a non-negative integer"},
        {"--size", "option --size needs a value"},
        {"stray", "unexpected argument 'stray'"},
    };
    assert_rejects("./build/lesson1", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(cli_help_exits_zero)
{
    char out[8192];
    ck_assert_int_eq(run_lesson1("--help", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "--mem-limit"));
    ck_assert_ptr_nonnull(strstr(out, "forum    B=8192,G=8,K=64,N=64"));
}
END_TEST

START_TEST(cli_mem_limit_skips_with_prediction)
{
    char out[16384];
    int rc = run_lesson1("--size small --impl naive,cpu --mem-limit 64M", out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "naive  skipped: predicted peak 138,543,104 bytes") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "cpu    peak                          4,456,448          4,456,448  equal") != NULL,
                  "%s", out);
}
END_TEST

START_TEST(cli_nothing_ran_exits_nonzero)
{
    char out[16384];
    int rc = run_lesson1("--size small --impl naive --mem-limit 64M", out, sizeof out);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "lesson1: no implementation ran") != NULL, "%s", out);
}
END_TEST

START_TEST(cli_csv_header_and_rows)
{
    static const char *const rows[] = {"1,naive,tiny,\"B=3,G=2,K=4,N=5\",1552,856,8,",
                                       "1,cpu,tiny,\"B=3,G=2,K=4,N=5\",752,376,6,"};
    assert_csv_rows("./build/lesson1", "--size tiny --impl naive,cpu --seed 5", rows, 2, "e+00,cpu\n");
}
END_TEST

START_TEST(cli_dump_writes_npy)
{
    static const char *const files[] = {"input.x", "input.W", "input.dout", "naive.out", "naive.dx",
                                        "naive.dW", "cpu.out", "cpu.dx", "cpu.dW"};
    static const char *const shapes[] = {"(3, 8)", "(2, 4, 5)", "(3, 2, 5)", "(3, 2, 5)", "(3, 8)",
                                         "(2, 4, 5)", "(3, 2, 5)", "(3, 8)", "(2, 4, 5)"};
    assert_dump_files("./build/lesson1", "--size tiny --impl naive,cpu", files, shapes, 9);
}
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
    tcase_add_test(mem, formula_naive_tiny);
    tcase_add_test(mem, formula_naive_small);
    tcase_add_test(mem, formula_cpu_tiny);
    tcase_add_test(mem, formula_cpu_small);
    tcase_add_test(mem, forum_naive_keeps_1107427328_bytes);
    tcase_add_test(mem, forum_cpu_keeps_inputs_and_output_only);
    tcase_add_test(mem, formula_saturates_instead_of_wrapping);
    tcase_set_timeout(mem, 120);
    suite_add_tcase(s, mem);

    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, cli_rejects_bad_input);
    tcase_add_test(cli, cli_help_exits_zero);
    tcase_add_test(cli, cli_mem_limit_skips_with_prediction);
    tcase_add_test(cli, cli_nothing_ran_exits_nonzero);
    tcase_add_test(cli, cli_csv_header_and_rows);
    tcase_add_test(cli, cli_dump_writes_npy);
    tcase_set_timeout(cli, 60);
    suite_add_tcase(s, cli);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lesson1_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
