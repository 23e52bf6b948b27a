/* test_lesson4.c - lesson 4's checks: finite-difference gradients, agreement with the float64 reference and
 * between implementations, zero allocations inside the fused loop, formula == tracker, the CLI.
 *
 * Tolerances, all |x - ref| <= atol + rtol |ref|:
 *   Gradient checks (central differences of the implementation's own float32 forward, accumulated in double;
 *   tests/gradcheck.h). With step h = 1e-2 the truncation error is h^2/6 |L'''| ~ 2e-5 |L'''| (L''' is O(1)
 *   at tiny: tanh, sigmoid and exp of O(1) arguments), and float32 rounding of a loss of ~T B H = 24 terms of
 *   O(1) gives ~24 * 6e-8 / (2h) ~ 1e-4 in the quotient. atol = 1e-3, rtol = 1e-2: ten times both. A wrong
 *   gradient term (a dropped factor 1/2, a swapped gate) is off by O(|grad|) ~ 0.1 - 1.
 *   Against float64: the lesson's tolerance (lesson4.c, max relative error 1e-3), the one the CLI applies.
 *   naive against cpu at small: elementwise, atol = rtol = 1e-4: each is within ~1e-6 relative of float64
 *   (measured 5e-7 at small), so 1e-4 is two orders above what two correct fp32 orders of summation differ by.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "track.h"
#include "../lessons/gru_reference.h"
#include "../lessons/lesson4.h"
#include "../naive/gru_eager.h"
#include "../optimized/gru_fused.h"
#include "cli_harness.h"
#include "nan_testing.h"

enum { NT = L4_NTENSORS };

static const gru_dims TINY = {3, 2, 3, 4};
static const gru_dims SMALL = {64, 16, 32, 64};

static gru_problem problem(gru_dims d, size_t checkpoint, size_t block)
{
    long long dims[4] = {(long long)d.T, (long long)d.B, (long long)d.X, (long long)d.H};
    long long opts[2] = {(long long)checkpoint, (long long)block};
    gru_problem p;
    ck_assert_ptr_null(gru_make_problem(dims, opts, &p));
    return p;
}

/* ---- finite differences ------------------------------------------------------------------------------- */

typedef enum { IMPL_NAIVE, IMPL_CPU } which_impl;

typedef struct {
    const gru_problem *p;
    which_impl impl;
    void *t[LESSON_MAX_TENSORS]; /* host inputs */
} fd_ctx;

static void free_grads(gru_grads *g)
{
    host_free(g->dx), host_free(g->dh0), host_free(g->dW_enc), host_free(g->dW_ih), host_free(g->dW_zh);
}

/* One forward (+ backward when g is non-NULL) of the implementation; returns sum(out * dout) in double. */
static double run(const fd_ctx *c, gru_grads *g, const gru_probe *probe)
{
    const gru_dims *d = &c->p->d;
    void *const *t = c->t;
    gru_grads tmp;
    gru_grads *gg = g ? g : &tmp;
    float *out;
    if (c->impl == IMPL_NAIVE) {
        gru_eager_saved sv;
        out = naive_gru_forward(d, t[X_], t[H0], t[EPS], t[WENC], t[WIH], t[WZH], &sv, probe);
        naive_gru_backward(d, t[X_], t[H0], t[EPS], t[WENC], t[WIH], t[WZH], t[DOUT], &sv, gg, probe);
    } else {
        void *arena_mem;
        gru_fused_ws ws;
        out = cpu_gru_forward(d, &c->p->o, t[X_], t[H0], t[EPS], t[WENC], t[WIH], t[WZH], &arena_mem, &ws, probe);
        cpu_gru_backward(d, &c->p->o, t[X_], t[H0], t[EPS], t[WENC], t[WIH], t[WZH], out, t[DOUT], arena_mem, &ws,
                         gg, probe);
    }
    double L = 0;
    for (size_t i = 0; i < gru_seq_count(d); i++) L += (double)out[i] * ((float *)t[DOUT])[i];
    host_free(out);
    if (!g) free_grads(&tmp);
    return L;
}

static double loss(void *ctx) { return run(ctx, NULL, NULL); }

static void check_gradients(which_impl impl, size_t checkpoint, size_t block, uint64_t seed)
{
    gru_problem p = problem(TINY, checkpoint, block);
    fd_ctx c = {&p, impl, {0}};
    lesson_make_inputs(&lesson4_def, &p, seed, c.t);
    gru_grads g;
    run(&c, &g, NULL);
    struct { int input; float *grad; size_t n; const char *name; } ps[] = {
        {X_, g.dx, gru_x_count(&p.d), "dx"},         {H0, g.dh0, gru_h0_count(&p.d), "dh0"},
        {WENC, g.dW_enc, gru_wenc_count(&p.d), "dW_enc"}, {WIH, g.dW_ih, gru_wih_count(&p.d), "dW_ih"},
        {WZH, g.dW_zh, gru_wzh_count(&p.d), "dW_zh"}};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        gradcheck_result r = gradcheck(loss, &c, c.t[ps[k].input], DT_F32, ps[k].grad, DT_F32, ps[k].n, 1, 1e-2,
                                       1e-3, 1e-2);
        ck_assert_msg(r.failed == 0, "%s (impl %d, checkpoint %zu): %zu of %zu elements off, worst %zu: analytic %g "
                      "numeric %g", ps[k].name, (int)impl, checkpoint, r.failed, r.checked, r.worst,
                      r.worst_analytic, r.worst_numeric);
    }
    free_grads(&g);
    lesson_free_slots(&lesson4_def, c.t);
}

START_TEST(test_naive_gradcheck) { check_gradients(IMPL_NAIVE, 0, 16, 41); }
END_TEST
START_TEST(test_cpu_gradcheck) { check_gradients(IMPL_CPU, 0, 16, 42); }
END_TEST
START_TEST(test_cpu_gradcheck_checkpoint)
{
    check_gradients(IMPL_CPU, 1, 16, 43); /* every step its own segment */
    check_gradients(IMPL_CPU, 2, 16, 44); /* segments of 2 and 1: a partial last segment */
    check_gradients(IMPL_CPU, 2, 1, 45);  /* and one step per input projection */
}
END_TEST

/* The float64 reference's gradients against central differences of its own float64 loss. */
static double ref_loss(void *ctx)
{
    fd_ctx *c = ctx;
    gru_inputs in = {c->t[X_], c->t[H0], c->t[EPS], c->t[WENC], c->t[WIH], c->t[WZH], c->t[DOUT]};
    return gru_reference_loss(&c->p->d, &in);
}
START_TEST(test_reference_gradcheck)
{
    gru_problem p = problem(TINY, 0, 16);
    fd_ctx c = {&p, IMPL_CPU, {0}};
    lesson_make_inputs(&lesson4_def, &p, 46, c.t);
    double *ref[LESSON_MAX_TENSORS] = {0};
    ck_assert_ptr_null(lesson_make_reference(&lesson4_def, &p, c.t, ref));
    int inputs[] = {X_, H0, WENC, WIH, WZH}, grads[] = {DX, DH0, DWENC, DWIH, DWZH};
    for (int k = 0; k < 5; k++) {
        size_t n = lesson_tensor_count(&lesson4_def, inputs[k], &p);
        /* float32 parameters, double loss: only truncation error, h^2/6 |L'''| with h = 1e-2 */
        gradcheck_result r = gradcheck(ref_loss, &c, c.t[inputs[k]], DT_F32, ref[grads[k]], DT_F64, n, 1, 1e-2, 1e-4,
                                       1e-3);
        ck_assert_msg(r.failed == 0, "reference gradient %d: worst %zu analytic %g numeric %g", k, r.worst,
                      r.worst_analytic, r.worst_numeric);
    }
    lesson_free_ref(&lesson4_def, ref);
    lesson_free_slots(&lesson4_def, c.t);
}
END_TEST

/* ---- the session: validation against float64 and formula == tracker ----------------------------------- */

/* Runs impl through the generic session on fresh inputs; asserts formula == tracker to the byte and the
 * lesson's float64 tolerance when validate. */
static void session_run(const gru_problem *p, const char *impl, uint64_t seed, int validate)
{
    void *t[LESSON_MAX_TENSORS] = {0};
    double *ref[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(&lesson4_def, p, seed, t);
    lesson_result res;
    lesson_run_impl(&lesson4_def, p, lesson_find_impl(&lesson4_def, impl), t, &res);
    ck_assert_msg(res.row.peak_bytes == res.row.predicted_peak, "%s T=%zu B=%zu X=%zu H=%zu ckpt=%zu block=%zu: peak "
                  "%zu, formula %zu", impl, p->d.T, p->d.B, p->d.X, p->d.H, p->o.checkpoint, p->o.block,
                  res.row.peak_bytes, res.row.predicted_peak);
    ck_assert_uint_eq(res.row.forward_live_bytes, res.row.predicted_forward_live);
    ck_assert_uint_eq(res.row.allocs, res.row.predicted_allocs);
    if (validate) {
        ck_assert_ptr_null(lesson_make_reference(&lesson4_def, p, t, ref));
        double e = lesson_max_rel_err(&lesson4_def, p, &res, ref);
        ck_assert_msg(e <= lesson4_def.tolerance, "%s: max rel err %g", impl, e);
        lesson_free_ref(&lesson4_def, ref);
    }
    lesson_result_free(&lesson4_def, &res);
    lesson_free_slots(&lesson4_def, t);
}

START_TEST(test_formula_equals_tracker)
{
    /* shapes where different terms of naive's peak win: X >> H makes dx_t grow the live bytes each backward
     * step; T = 1 and 2 are the edge cases of its step recurrence; big H makes the weight temporaries win */
    const gru_dims shapes[] = {{3, 2, 3, 4}, {1, 2, 3, 4}, {2, 3, 5, 2}, {5, 2, 90, 3}, {4, 1, 2, 40}, {7, 3, 6, 5}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        gru_problem p = problem(shapes[i], 0, 16);
        session_run(&p, "naive", 50 + i, 1);
        session_run(&p, "cpu", 50 + i, 1);
        for (size_t k = 1; k <= 3; k++) {
            gru_problem q = problem(shapes[i], k, k == 3 ? 0 : 2);
            session_run(&q, "cpu", 60 + i, 1);
        }
    }
}
END_TEST

START_TEST(test_small_vs_reference)
{
    gru_problem p = problem(SMALL, 0, 16), q = problem(SMALL, 8, 4);
    session_run(&p, "naive", 70, 1);
    session_run(&p, "cpu", 70, 1);
    session_run(&q, "cpu", 70, 1);
}
END_TEST

START_TEST(test_naive_vs_cpu_small)
{
    gru_problem p = problem(SMALL, 0, 16), q = problem(SMALL, 16, 16);
    void *t[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(&lesson4_def, &p, 71, t);
    lesson_result a, b, c;
    lesson_run_impl(&lesson4_def, &p, lesson_find_impl(&lesson4_def, "naive"), t, &a);
    lesson_run_impl(&lesson4_def, &p, lesson_find_impl(&lesson4_def, "cpu"), t, &b);
    lesson_run_impl(&lesson4_def, &q, lesson_find_impl(&lesson4_def, "cpu"), t, &c);
    for (int i = OUT; i < NT; i++) {
        size_t n = lesson_tensor_count(&lesson4_def, i, &p);
        const float *x = a.result[i], *y = b.result[i], *z = c.result[i];
        for (size_t k = 0; k < n; k++) {
            ck_assert_msg(fabsf(x[k] - y[k]) <= 1e-4f + 1e-4f * fabsf(x[k]), "%s[%zu]: naive %g cpu %g",
                          lesson4_def.tensors[i].name, k, x[k], y[k]);
            /* recomputation runs the same code on the same h: bit for bit the same gradients as no checkpoint,
             * except that segments change the GEMMs' row counts, so compare with the same tolerance */
            ck_assert_msg(fabsf(y[k] - z[k]) <= 1e-4f + 1e-4f * fabsf(y[k]), "%s[%zu]: cpu %g checkpointed %g",
                          lesson4_def.tensors[i].name, k, y[k], z[k]);
        }
    }
    lesson_result_free(&lesson4_def, &a);
    lesson_result_free(&lesson4_def, &b);
    lesson_result_free(&lesson4_def, &c);
    lesson_free_slots(&lesson4_def, t);
}
END_TEST

/* ---- allocations inside the loops ---------------------------------------------------------------------- */

/* One direct forward + backward with the sampler recording every step into tr. */
static gru_trace trace_of(const gru_problem *p, which_impl impl)
{
    gru_trace tr;
    fd_ctx c = {p, impl, {0}};
    lesson_make_inputs(&lesson4_def, p, 80, c.t);
    gru_sampler_attach(&tr, &p->d, 1);
    gru_grads g;
    run(&c, &g, gru_sampler_probe());
    gru_sampler_attach(NULL, NULL, 0);
    free_grads(&g);
    lesson_free_slots(&lesson4_def, c.t);
    return tr;
}

START_TEST(test_zero_allocations_in_fused_loop)
{
    gru_problem ps[] = {problem(SMALL, 0, 16), problem(SMALL, 16, 16), problem(SMALL, 5, 3)};
    for (size_t i = 0; i < 3; i++) {
        gru_trace tr = trace_of(&ps[i], IMPL_CPU);
        ck_assert_uint_eq(tr.fwd_last_allocs, tr.fwd_first_allocs);
        ck_assert_uint_eq(tr.bwd_last_allocs, tr.bwd_first_allocs);
        ck_assert_int_gt(tr.n, 2 * (int)SMALL.T > GRU_TRACE_MAX ? GRU_TRACE_MAX - 1 : 2 * (int)SMALL.T);
    }
    gru_trace tn = trace_of(&ps[0], IMPL_NAIVE);
    ck_assert_double_eq(gru_trace_fwd_allocs_per_step(&tn), 17.0);
    ck_assert_double_eq(gru_trace_bwd_allocs_per_step(&tn), 22.0);
}
END_TEST

/* The targets at medium, from the formulas (which the tests above hold equal to the tracker): cpu
 * allocates at most 32 times, naive at least 10 times per step, cpu's peak at least 1.25x below naive's. */
START_TEST(test_medium_targets)
{
    gru_problem p = problem((gru_dims){256, 32, 128, 256}, 0, 16);
    mem_formula n = naive_gru_memory(&p.d), c = cpu_gru_memory(&p.d, &p.o);
    ck_assert_uint_le(c.allocs, 32);
    ck_assert_uint_ge(n.allocs, 10 * p.d.T);
    ck_assert_msg((double)n.peak >= 1.25 * (double)c.peak, "naive %zu cpu %zu", n.peak, c.peak);
    /* kept per step and row: 10H floats for naive, 6H for cpu beside h */
    ck_assert_uint_eq(naive_gru_kept_per_step(&p.d), 10 * p.d.B * p.d.H * 4);
}
END_TEST

/* ---- the command line ---------------------------------------------------------------------------------- */
#define LESSON4 "build/lesson4"

START_TEST(cli_rejects_bad_input)
{
    const bad_input_case cases[] = {{"--dims T=0,Bt=2,X=3,H=4", "T"},
                                    {"--dims T=3,Bt=2,X=3,H=-1", "H"},
                                    {"--size tiny --checkpoint -1", "--checkpoint"},
                                    {"--dims T=2000000000,Bt=2000000000,X=3,H=2000000000", "overflows"}};
    assert_rejects(LESSON4, cases, sizeof cases / sizeof cases[0]);
}
END_TEST

/* --dump's files and shapes: every lesson's, from its definition, in test_lessons.c */

START_TEST(cli_runs_checkpointed_and_says_where_bytes_go)
{
    char out[1 << 16];
    int rc = run_lesson(LESSON4, "--size small --impl naive,cpu --checkpoint 8", out, sizeof out);
    ck_assert_output(rc == 0, out, "exit %d, expected 0", rc);
    ck_assert_ptr_nonnull(strstr(out, "cpu allocates 0 times per forward step and 0 per backward step"));
    ck_assert_ptr_nonnull(strstr(out, "Where the bytes go"));
}
END_TEST

/* The two lines that answer the forum's "2x an LSTM" and explain cuda's peak: their sums are the formulas'. */
static size_t bytes_after(const char *out, const char *key)
{
    const char *at = strstr(out, key);
    ck_assert_msg(at != NULL, "no '%s' in lesson4's output", key);
    size_t v = 0;
    for (at += strlen(key); *at == ' '; at++) {}
    for (; (*at >= '0' && *at <= '9') || *at == ','; at++)
        if (*at != ',') v = v * 10 + (size_t)(*at - '0');
    return v;
}

START_TEST(cli_prints_lstm_and_cuda_workspace_lines)
{
    char out[1 << 16];
    int rc = run_lesson(LESSON4, "--size small --impl cpu", out, sizeof out);
    ck_assert_output(rc == 0, out, "exit %d, expected 0", rc);
    gru_problem p = problem(SMALL, 0, 16);
    const size_t row = p.d.B * p.d.H * 4;
    ck_assert_uint_eq(bytes_after(out, "keeps 4 gates, c and h: 6*Bt*H*4 ="), 6 * row);
    ck_assert_uint_eq(bytes_after(out, "stacked copy of h: 11*Bt*H*4 ="), 11 * row);
    const size_t cpu = cpu_gru_memory(&p.d, &p.o).peak, cuda = cuda_gru_memory(&p.d, &p.o).peak;
    ck_assert_uint_eq(bytes_after(out, "allocated once per run):"), cpu);
    ck_assert_uint_eq(cuda, cpu + ((size_t)32 << 20));
    ck_assert_uint_eq(bytes_after(strstr(out, "allocated once per run):"), "= "), cuda); /* cpu + workspace = cuda */
    /* cuda-v3 to v5: the saved rows alone, T Bt 6H floats, in place of cpu's arena */
    const size_t saved = p.d.T * p.d.B * 6 * p.d.H * 4;
    ck_assert_uint_eq(bytes_after(out, "the saved rows alone, T*Bt*6H*4 ="), saved);
    ck_assert_uint_eq(bytes_after(out, "their peak"), cuda - gru_fused_arena_bytes(&p.d, &p.o) + saved);
}
END_TEST

/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN in x[t,b] reaches row b from step t on, and the weight gradients): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_naive_nan) { ck_assert_uint_eq(nan_lesson4("naive"), 0); }
END_TEST
START_TEST(nan_rule_cpu_nan) { ck_assert_uint_eq(nan_lesson4("cpu"), 0); }
END_TEST

static Suite *lesson4_suite(void)
{
    Suite *s = suite_create("lesson4");
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_naive_gradcheck);
    tcase_add_test(grad, test_cpu_gradcheck);
    tcase_add_test(grad, test_cpu_gradcheck_checkpoint);
    tcase_add_test(grad, test_reference_gradcheck);
    suite_add_tcase(s, grad);
    TCase *agree = tcase_create("agreement");
    tcase_set_timeout(agree, 60);
    tcase_add_test(agree, test_small_vs_reference);
    tcase_add_test(agree, test_naive_vs_cpu_small);
    suite_add_tcase(s, agree);
    TCase *mem = tcase_create("memory");
    tcase_set_timeout(mem, 60);
    tcase_add_test(mem, test_formula_equals_tracker);
    tcase_add_test(mem, test_zero_allocations_in_fused_loop);
    tcase_add_test(mem, test_medium_targets);
    suite_add_tcase(s, mem);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 60);
    tcase_add_test(cli, cli_rejects_bad_input);
    tcase_add_test(cli, cli_runs_checkpointed_and_says_where_bytes_go);
    tcase_add_test(cli, cli_prints_lstm_and_cuda_workspace_lines);
    suite_add_tcase(s, cli);
    TCase *nanc = tcase_create("nan");
    tcase_add_test(nanc, nan_rule_naive_nan);
    tcase_add_test(nanc, nan_rule_cpu_nan);
    suite_add_tcase(s, nanc);
    return s;
}

int main(void) { return check_main(lesson4_suite()); }
