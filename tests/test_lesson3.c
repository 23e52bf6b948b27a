/* test_lesson3.c - lesson 3 (MaxSim): gradients by central differences, every implementation against the float64
 * reference, naive against cpu, --recompute against the saved argmax bit for bit, the tie rule, the memory
 * formulas against the tracker, the medium size's beyond-bytes, and the command line.
 *
 * Tolerances:
 *   Gradient checks. out is piecewise linear in every input: away from a change of argmax, moving a[i,j,k] by h
 *   moves each score by h*b[m,n,k] exactly, so the central difference equals the derivative up to float32 rounding
 *   of the loss sum(out*dout): |out| <= J*K*max|a|max|b| ~ 10 at tiny, so rounding ~ 1e-6 divided by 2h = 2e-2
 *   gives ~5e-5. atol = rtol = 1e-3 leaves a factor 20. The check is only valid if no argmax changes within +-h:
 *   draw_separated() redraws until every (i,j,m)'s best score beats its runner-up by more than 4*h*max|x|*K
 *   (a step of h in one element moves a score by at most h*max|x|), and the test asserts that gap.
 *   Against float64. The grid inputs make every score exact, so the argmax is the reference's; what is left is
 *   float32 summation: da sums M terms, db up to I*J, out J exact grid values; relative to max|ref| that is below
 *   sqrt(n)*6e-8 = 1.2e-6 at the small size. The lesson's 1e-4 is a loose bound on it; a wrong argmax moves a whole
 *   term (~0.1 of max|db|), 1000x above it.
 */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "gradcheck.h"
#include "rng.h"
#include "track.h"
#include "lesson.h"
#include "../lessons/maxsim_reference.h"
#include "../kernels/maxsim.h"
#include "cli_harness.h"


static const ms_dims TINY = {2, 3, 2, 4, 3}, SMALL = {20, 20, 25, 19, 25};
/* more rows than a tile (300 > 256) and more n than a tile (600 > 512): partial tiles and chunk merging */
static const ms_dims TILED = {3, 100, 3, 600, 8};
static const ms_dims ODD = {3, 17, 5, 29, 11};

#include "maxsim_special.h"

/* --- the max rule: PyTorch's, as torch 1.13's x.max(-1) answered on this machine --------------------------- */
static void argmax_of(const float *x, int n, float *v, int *at)
{
    *v = x[0], *at = 0;
    for (int k = 1; k < n; k++)
        if (ms_better(x[k], k, *v, *at)) *v = x[k], *at = k;
}

START_TEST(max_rule_is_pytorchs)
{
    /* torch: [1, nan, 3, nan] -> (nan, 1); [inf, 2, inf, nan] -> (nan, 3); 4 x -inf -> (-inf, 0);
     * [5, inf, inf, 1] -> (inf, 1) */
    static const float rows[4][4] = {{1, NAN, 3, NAN}, {INFINITY, 2, INFINITY, NAN},
                                     {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, {5, INFINITY, INFINITY, 1}};
    static const int want[4] = {1, 3, 0, 1};
    for (int r = 0; r < 4; r++) {
        float v;
        int at;
        argmax_of(rows[r], 4, &v, &at);
        ck_assert_int_eq(at, want[r]);
        ck_assert_int_eq(ms_class(v), ms_class(rows[r][want[r]]));
        for (int k = 0; k < 4; k++) /* the float fast path agrees with the rule */
            for (int b = 0; b < 4; b++)
                ck_assert_int_eq(ms_better_f(rows[r][k], k, rows[r][b], b), ms_better(rows[r][k], k, rows[r][b], b));
    }
    ck_assert(ms_better(-INFINITY, 0, -INFINITY, 1) && !ms_better(-INFINITY, 1, -INFINITY, 0)); /* seed (-Inf, 0) */
}
END_TEST

/* cuda-v5's fold: for a later (higher) column, ms_later_wins decides as the rule does, on every pair of special
 * and ordinary values, ties included */
START_TEST(later_column_rule_is_the_rule)
{
    static const float vals[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.125f, 3.0e38f, -3.0e38f,
                                 1.0e-45f};
    int n = (int)(sizeof vals / sizeof vals[0]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            ck_assert_msg(ms_later_wins(vals[i], vals[j]) == ms_better(vals[i], 7, vals[j], 3),
                          "v %g over best %g: ms_later_wins %d, the rule %d", vals[i], vals[j],
                          ms_later_wins(vals[i], vals[j]), ms_better(vals[i], 7, vals[j], 3));
}
END_TEST

START_TEST(nan_inf_naive)
{
    ms_special_case("naive", &ODD, MS_NAN_IN_A, 0, 0, 61);
    ms_special_case("naive", &ODD, MS_NAN_IN_B, 0, 0, 62);
    ms_special_case("naive", &ODD, MS_INF, 0, 0, 63);
}
END_TEST
START_TEST(nan_inf_cpu)
{
    ms_special_case("cpu", &ODD, MS_NAN_IN_A, 0, 0, 64);
    ms_special_case("cpu", &ODD, MS_NAN_IN_B, 1, 0, 65);
    ms_special_case("cpu", &ODD, MS_INF, 0, 0, 66);
    ms_special_case("cpu", &TILED, MS_NAN_IN_B, 1, 0, 67); /* the NaN column in the second n chunk */
}
END_TEST

/* The CUDA fit check bounds every grid: here only --deterministic's histogram (one thread per (i, j, m), 128
 * per block) would exceed 2^31-1 blocks; one row fewer of M fits. */
START_TEST(cuda_unfit_histogram_grid)
{
    ms_dims big = {1, INT32_MAX, 128, 1, 1}, fits = {1, INT32_MAX, 127, 1, 1};
    const char *why = cuda_ms_unfit(&big);
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_nonnull(strstr(why, "histogram"));
    ck_assert_ptr_null(cuda_ms_unfit(&fits));
}
END_TEST

/* cuda-v4 keeps a[i]'s 64 rows of K floats in shared memory beside its ring: K = 257 is refused with the reason
 * whatever the device (the device's own limit, 98,304 bytes at K = 256 within the 99 KB GPUs', is the version's
 * cuda_fit check: tests/cuda_lesson3.c's alias test on the RTX4090 and L4 profiles) */
START_TEST(cuda4_unfit_shared_memory)
{
    ms_dims at = {2, 3, 2, 4, 256}, over = {2, 3, 2, 4, 257};
    ck_assert_ptr_null(cuda_ms4_unfit(&at));
    const char *why = cuda_ms4_unfit(&over);
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_nonnull(strstr(why, "shared memory"));
}
END_TEST

/* --- helpers -------------------------------------------------------------------------------------------- */
typedef struct {
    float *a, *b, *dout;
} inputs;

static inputs alloc_inputs(const ms_dims *d)
{
    inputs in = {host_alloc_array(ms_a_count(d), DT_F32, "test a"), host_alloc_array(ms_b_count(d), DT_F32, "test b"),
                 host_alloc_array(ms_out_count(d), DT_F32, "test dout")};
    return in;
}
static void free_inputs(inputs *in)
{
    host_free(in->a);
    host_free(in->b);
    host_free(in->dout);
}

typedef enum { IMPL_NAIVE, IMPL_CPU, IMPL_CPU_RECOMPUTE } which;

/* out, and (when da != NULL) the gradients, of one implementation */
static float *run(which w, const ms_dims *d, const inputs *in, float **da, float **db)
{
    float *out;
    if (w == IMPL_NAIVE) {
        naive_ms_saved sv;
        out = naive_ms_forward(d, in->a, in->b, &sv);
        if (da) naive_ms_backward(d, in->a, in->b, &sv, in->dout, da, db);
        else host_free(sv.idx);
    } else {
        cpu_ms_saved sv;
        out = cpu_ms_forward(d, in->a, in->b, w == IMPL_CPU_RECOMPUTE, &sv);
        if (da) cpu_ms_backward(d, in->a, in->b, &sv, in->dout, da, db);
        else host_free(sv.arg);
    }
    return out;
}

/* The smallest gap, over (i, j, m), between the best score and the runner-up (in double). */
static double min_gap(const ms_dims *d, const float *a, const float *b)
{
    double g = INFINITY;
    for (size_t r = 0; r < ms_rows(d); r++)
        for (size_t m = 0; m < d->M; m++) {
            double s1 = -INFINITY, s2 = -INFINITY;
            for (size_t n = 0; n < d->N; n++) {
                double s = 0;
                for (size_t k = 0; k < d->K; k++) s += (double)a[r * d->K + k] * b[(m * d->N + n) * d->K + k];
                if (s > s1) {
                    s2 = s1;
                    s1 = s;
                } else if (s > s2) s2 = s;
            }
            g = fmin(g, s1 - s2);
        }
    return g;
}

#define FD_H 1e-2
/* Continuous normal inputs, redrawn until every max beats its runner-up by more than 4 h max|x| K. */
static double draw_separated(const ms_dims *d, inputs *in, double *need)
{
    rng r;
    rng_seed(&r, 303);
    for (;;) {
        rng_fill_normal_f32(&r, in->a, ms_a_count(d), 0, 1);
        rng_fill_normal_f32(&r, in->b, ms_b_count(d), 0, 1);
        rng_fill_normal_f32(&r, in->dout, ms_out_count(d), 0, 1);
        double mx = 0;
        for (size_t e = 0; e < ms_a_count(d); e++) mx = fmax(mx, fabs(in->a[e]));
        for (size_t e = 0; e < ms_b_count(d); e++) mx = fmax(mx, fabs(in->b[e]));
        *need = 4 * FD_H * mx * (double)d->K;
        double g = min_gap(d, in->a, in->b);
        if (g > *need) return g;
    }
}

typedef struct {
    which w;
    const ms_dims *d;
    const inputs *in;
} loss_ctx;

static double loss(void *p)
{
    const loss_ctx *c = p;
    float *out = run(c->w, c->d, c->in, NULL, NULL);
    double s = 0;
    for (size_t e = 0; e < ms_out_count(c->d); e++) s += (double)out[e] * c->in->dout[e];
    host_free(out);
    return s;
}

static void gradcheck_impl(which w)
{
    inputs in = alloc_inputs(&TINY);
    double need, gap = draw_separated(&TINY, &in, &need);
    ck_assert_msg(gap > need, "max separated from runner-up by %g, need > %g", gap, need);
    float *da, *db, *out = run(w, &TINY, &in, &da, &db);
    loss_ctx c = {w, &TINY, &in};
    gradcheck_result ra = gradcheck(loss, &c, in.a, DT_F32, da, DT_F32, ms_a_count(&TINY), 1, FD_H, 1e-3, 1e-3);
    gradcheck_result rb = gradcheck(loss, &c, in.b, DT_F32, db, DT_F32, ms_b_count(&TINY), 1, FD_H, 1e-3, 1e-3);
    char msg[256];
    ck_assert_msg(ra.failed == 0, "%s", gradcheck_message(&ra, "da", msg, sizeof msg));
    ck_assert_msg(rb.failed == 0, "%s", gradcheck_message(&rb, "db", msg, sizeof msg));
    ck_assert_uint_eq(ra.checked, ms_a_count(&TINY));
    host_free(out);
    host_free(da);
    host_free(db);
    free_inputs(&in);
}

START_TEST(gradcheck_naive_tiny) { gradcheck_impl(IMPL_NAIVE); }
END_TEST
START_TEST(gradcheck_cpu_tiny) { gradcheck_impl(IMPL_CPU); }
END_TEST
START_TEST(gradcheck_cpu_recompute_tiny) { gradcheck_impl(IMPL_CPU_RECOMPUTE); }
END_TEST

/* naive and cpu agree at the thread's example size and at a size that splits rows and n into several tiles */
static void naive_vs_cpu(const ms_dims *d, uint64_t seed)
{
    inputs in = alloc_inputs(d);
    ms_fill_inputs(d, seed, in.a, in.b, in.dout);
    float *na, *nb, *ca, *cb;
    float *no = run(IMPL_NAIVE, d, &in, &na, &nb), *co = run(IMPL_CPU, d, &in, &ca, &cb);
    /* exact scores, same j order: out is bitwise equal; gradients within float32 summation (header) */
    ck_assert_int_eq(memcmp(no, co, ms_out_count(d) * sizeof(float)), 0);
    compare_result ga = compare_buffers(ca, DT_F32, na, DT_F32, ms_a_count(d), 1e-5, 1e-5);
    compare_result gb = compare_buffers(cb, DT_F32, nb, DT_F32, ms_b_count(d), 1e-5, 1e-5);
    ck_assert_msg(ga.failures == 0 && gb.failures == 0, "da %zu (max %g), db %zu (max %g) off", ga.failures,
                  ga.max_abs, gb.failures, gb.max_abs);
    host_free(no), host_free(na), host_free(nb), host_free(co), host_free(ca), host_free(cb);
    free_inputs(&in);
}
START_TEST(naive_vs_cpu_small) { naive_vs_cpu(&SMALL, 11); }
END_TEST
START_TEST(naive_vs_cpu_tiled) { naive_vs_cpu(&TILED, 12); }
END_TEST

/* --recompute finds the same argmax by the same tiles and adds the same terms in the same order */
static void recompute_bitwise(const ms_dims *d, uint64_t seed)
{
    inputs in = alloc_inputs(d);
    ms_fill_inputs(d, seed, in.a, in.b, in.dout);
    float *sa, *sb, *ra, *rb;
    float *so = run(IMPL_CPU, d, &in, &sa, &sb), *ro = run(IMPL_CPU_RECOMPUTE, d, &in, &ra, &rb);
    ck_assert_int_eq(memcmp(so, ro, ms_out_count(d) * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(sa, ra, ms_a_count(d) * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(sb, rb, ms_b_count(d) * sizeof(float)), 0);
    host_free(so), host_free(sa), host_free(sb), host_free(ro), host_free(ra), host_free(rb);
    free_inputs(&in);
}
START_TEST(recompute_equals_saved_small) { recompute_bitwise(&SMALL, 21); }
END_TEST
START_TEST(recompute_equals_saved_tiled) { recompute_bitwise(&TILED, 22); }
END_TEST

/* Ties: b[m, n1] == b[m, n2] == the best row; the lowest n wins, in naive's scan and in cpu's chunk merge. */
static void tie_case(const ms_dims *d, size_t n1, size_t n2)
{
    inputs in = alloc_inputs(d);
    ms_fill_inputs(d, 31, in.a, in.b, in.dout);
    for (size_t e = 0; e < ms_a_count(d); e++) in.a[e] = 1.0f;               /* score = sum of b's row */
    for (size_t e = 0; e < ms_b_count(d); e++) in.b[e] = -0.5f;
    for (size_t m = 0; m < d->M; m++)
        for (size_t k = 0; k < d->K; k++) in.b[(m * d->N + n1) * d->K + k] = in.b[(m * d->N + n2) * d->K + k] = 1.0f;
    naive_ms_saved nv;
    cpu_ms_saved cv;
    float *no = naive_ms_forward(d, in.a, in.b, &nv), *co = cpu_ms_forward(d, in.a, in.b, 0, &cv);
    for (size_t e = 0; e < ms_arg_count(d); e++) {
        ck_assert_int_eq(nv.idx[e], (int64_t)n1);
        ck_assert_int_eq(cv.arg[e], (int32_t)n1);
    }
    host_free(nv.idx), host_free(cv.arg), host_free(no), host_free(co);
    free_inputs(&in);
}
START_TEST(ties_lowest_n_wins) { tie_case(&SMALL, 3, 11); }
END_TEST
START_TEST(ties_across_chunks_lowest_n_wins) { tie_case(&TILED, 5, 580); } /* 580 is in the second n chunk */
END_TEST

/* --- through the session: the numbers the table prints --------------------------------------------------- */
static void make_prob(const ms_dims *d, int recompute, lesson_problem *p)
{
    long long dims[5] = {(long long)d->I, (long long)d->J, (long long)d->M, (long long)d->N, (long long)d->K};
    long long opts[3] = {recompute, 0, 0};
    ck_assert_ptr_null(lesson3_def.make_problem(dims, opts, p));
}

static void session_case(const char *impl, const ms_dims *d, int recompute, uint64_t seed)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    make_prob(d, recompute, &p);
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &p, seed, t);
    ck_assert_ptr_null(lesson_make_reference(L, &p, t, ref));
    int k = lesson_find_impl(L, impl);
    lesson_result res;
    lesson_run_impl(L, &p, k, t, &res);
    mem_formula f = L->impls[k].memory(&p);
    ck_assert_uint_eq(res.row.peak_bytes, f.peak);
    ck_assert_uint_eq(res.row.forward_live_bytes, f.forward_live);
    ck_assert_uint_eq(res.row.allocs, f.allocs);
    double err = lesson_max_rel_err(L, &p, &res, ref);
    ck_assert_msg(err <= L->tolerance, "%s: max rel err %g above %g", impl, err, L->tolerance);
    lesson_result_free(L, &res);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}
START_TEST(session_naive_tiny) { session_case("naive", &TINY, 0, 41); }
END_TEST
START_TEST(session_naive_small) { session_case("naive", &SMALL, 0, 42); }
END_TEST
START_TEST(session_cpu_tiny) { session_case("cpu", &TINY, 0, 43); }
END_TEST
START_TEST(session_cpu_small) { session_case("cpu", &SMALL, 0, 44); }
END_TEST
START_TEST(session_cpu_tiled) { session_case("cpu", &TILED, 0, 45); }
END_TEST
START_TEST(session_cpu_recompute_small) { session_case("cpu", &SMALL, 1, 46); }
END_TEST
START_TEST(session_cpu_recompute_tiled) { session_case("cpu", &TILED, 1, 47); }
END_TEST

/* The medium size's figures, from the formulas (equal to the tracker, above): "beyond" = peak - inputs, outputs, grads */
START_TEST(medium_keeps_the_argmax_not_the_4d_tensor)
{
    ms_dims d = {32, 256, 32, 256, 128};
    size_t io = 2 * 4 * (ms_a_count(&d) + ms_b_count(&d)) + 2 * 4 * ms_out_count(&d);
    mem_formula nv = naive_ms_memory(&d), cs = cpu_ms_memory(&d, 0), cr = cpu_ms_memory(&d, 1);
    ck_assert_uint_eq(nv.peak - io, 268435456);            /* the [I,J,M,N] f32 tensor */
    ck_assert_uint_eq(cs.peak - io, 1048576);              /* the int32 argmax */
    ck_assert((nv.peak - io) / (cs.peak - io) >= 250);
    ck_assert((double)nv.peak / (double)cs.peak > 15.9); /* 16.0x: a, b, da, db alone are 16 MiB (doc, §5) */
    /* --recompute keeps nothing: live after forward is a, b and out */
    ck_assert_uint_eq(cr.forward_live, 4 * (ms_a_count(&d) + ms_b_count(&d) + ms_out_count(&d)));
}
END_TEST

START_TEST(forum_naive_predicted_cpu_estimated)
{
    ms_dims d = {300, 2000, 315, 1990, 256};
    ck_assert_uint_eq(4 * ms_scores_count(&d), 1504440000000ull); /* 1.37 TiB */
    lesson_problem p;
    make_prob(&d, 0, &p);
    /* cpu's work at the forum's size is ~1e14 multiply-adds: hours at any CPU GEMM rate, so the session's
     * --time-limit (default 120 s) skips it with the estimate instead of running */
    double work = lesson3_def.impls[lesson_find_impl(&lesson3_def, "cpu")].work(&p);
    ck_assert_msg(work > 9e13, "work %g", work);
    ck_assert_ptr_nonnull(lesson3_def.reference_unfit(&p));
    char out[1 << 15];
    int rc = run_lesson("./build/lesson3", "--size forum --impl cpu", out, sizeof out);
    ck_assert_output(rc == 4 && strstr(out, "cpu      skipped: estimated") && strstr(out, "over --time-limit 120"),
                     out, "rc %d: cpu was not skipped over --time-limit", rc);
}
END_TEST

/* --- the command line ----------------------------------------------------------------------------------- */
START_TEST(cli_rejects_bad_input)
{
    static const bad_input_case cases[] = {
        {"--dims I=0", "I='0' must be an integer from 1"},
        {"--dims K=-3", "K='-3' must be an integer from 1"},
        {"--dims I=2147483647,J=2147483647,M=2147483647,N=2147483647", "overflows"},
        {"--impl cpu,gpu", "unknown implementation 'gpu'"},
    };
    assert_rejects("./build/lesson3", cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(cli_dump_writes_npy)
{
    static const char *const files[] = {"input.a", "input.b", "input.dout", "naive.out", "naive.da", "naive.db",
                                        "cpu.out", "cpu.da", "cpu.db"};
    static const char *const shapes[] = {"(2, 3, 3)", "(2, 4, 3)", "(2, 2)", "(2, 2)", "(2, 3, 3)", "(2, 4, 3)",
                                         "(2, 2)", "(2, 3, 3)", "(2, 4, 3)"};
    static const char *const descrs[] = {"<f4", "<f4", "<f4", "<f4", "<f4", "<f4", "<f4", "<f4", "<f4"};
    assert_dump_files("./build/lesson3", "--size tiny --impl naive,cpu", files, shapes, descrs, 9);
}
END_TEST

START_TEST(cli_small_prints_thread_figures)
{
    char out[32768];
    int rc = run_lesson("./build/lesson3", "--size small --impl naive,cpu", out, sizeof out);
    ck_assert_output(rc == 0, out, "exit %d, expected 0", rc);
    ck_assert_output(strstr(out, "760,000 bytes (742.19 KiB)") && strstr(out, "120,000 bytes (117.19 KiB)"), out, "the thread's profiler figures are missing");
    ck_assert_output(strstr(out, "Where the bytes go:"), out, "no 'Where the bytes go' paragraph");
}
END_TEST

static Suite *lesson3_suite(void)
{
    Suite *s = suite_create("lesson3");
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, gradcheck_naive_tiny);
    tcase_add_test(grad, gradcheck_cpu_tiny);
    tcase_add_test(grad, gradcheck_cpu_recompute_tiny);
    suite_add_tcase(s, grad);

    TCase *num = tcase_create("numerics");
    tcase_add_test(num, naive_vs_cpu_small);
    tcase_add_test(num, naive_vs_cpu_tiled);
    tcase_add_test(num, recompute_equals_saved_small);
    tcase_add_test(num, recompute_equals_saved_tiled);
    tcase_add_test(num, ties_lowest_n_wins);
    tcase_add_test(num, ties_across_chunks_lowest_n_wins);
    tcase_add_test(num, max_rule_is_pytorchs);
    tcase_add_test(num, later_column_rule_is_the_rule);
    tcase_add_test(num, nan_inf_naive);
    tcase_add_test(num, nan_inf_cpu);
    tcase_add_test(num, cuda_unfit_histogram_grid);
    tcase_add_test(num, cuda4_unfit_shared_memory);
    tcase_set_timeout(num, 60);
    suite_add_tcase(s, num);

    TCase *ses = tcase_create("session");
    tcase_add_test(ses, session_naive_tiny);
    tcase_add_test(ses, session_naive_small);
    tcase_add_test(ses, session_cpu_tiny);
    tcase_add_test(ses, session_cpu_small);
    tcase_add_test(ses, session_cpu_tiled);
    tcase_add_test(ses, session_cpu_recompute_small);
    tcase_add_test(ses, session_cpu_recompute_tiled);
    tcase_add_test(ses, medium_keeps_the_argmax_not_the_4d_tensor);
    tcase_add_test(ses, forum_naive_predicted_cpu_estimated);
    tcase_set_timeout(ses, 60);
    suite_add_tcase(s, ses);

    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, cli_rejects_bad_input);
    tcase_add_test(cli, cli_dump_writes_npy);
    tcase_add_test(cli, cli_small_prints_thread_figures);
    tcase_set_timeout(cli, 60);
    suite_add_tcase(s, cli);
    return s;
}

int main(void) { return check_main(lesson3_suite()); }
