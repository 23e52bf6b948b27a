/* cuda_lesson3.c - lesson 3 on the GPU (or the CPU emulation build): cuda (v2, tiled) and cuda-v1 against the
 * float64 reference, their device memory formulas against the tracker, in every mode (saved argmax, --recompute,
 * --deterministic); out bitwise equal to cpu's (exact grid scores summed over j in the same order); the
 * deterministic db bitwise equal across two runs. Tiny and small sizes, plus one that spans several tiles, so the
 * emulation stays fast. Run by test_cuda without fork. */
#include <check.h>
#include <string.h>

#include "../kernels/maxsim_problem.h"
#include "../kernels/runtime/track.h"
#include "../lessons/lesson3.h"
#include "cuda_suites.h"


static const ms_dims TINY = {2, 3, 2, 4, 3}, SMALL = {20, 20, 25, 19, 25}, TILED = {2, 70, 2, 130, 20};

static void prob_for(const ms_dims *d, int recompute, int deterministic, lesson_problem *p)
{
    long long dims[5] = {(long long)d->I, (long long)d->J, (long long)d->M, (long long)d->N, (long long)d->K};
    long long opts[2] = {recompute, deterministic};
    ck_assert_ptr_null(lesson3_def.make_problem(dims, opts, p));
}

/* Runs impl; checks formula == tracker and the reference; returns the result (caller frees). */
static void run_checked(const char *impl, const lesson_problem *p, void *const *t, double *const *ref,
                        lesson_result *res)
{
    const lesson *L = &lesson3_def;
    int k = lesson_find_impl(L, impl);
    lesson_run_impl(L, p, k, t, res);
    mem_formula f = L->impls[k].memory(p);
    ck_assert_uint_eq(res->row.peak_bytes, f.peak);
    ck_assert_uint_eq(res->row.forward_live_bytes, f.forward_live);
    ck_assert_uint_eq(res->row.allocs, f.allocs);
    double err = lesson_max_rel_err(L, p, res, ref);
    ck_assert_msg(err <= L->tolerance, "%s: max rel err %g above %g", impl, err, L->tolerance);
}

static void gpu_case(const char *impl, const ms_dims *d, int recompute, int deterministic, uint64_t seed)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    prob_for(d, recompute, deterministic, &p);
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &p, seed, t);
    ck_assert_ptr_null(lesson_make_reference(L, &p, t, ref));
    lesson_result g, c;
    run_checked(impl, &p, t, ref, &g);
    run_checked("cpu", &p, t, ref, &c);
    ck_assert_int_eq(memcmp(g.result[OUT], c.result[OUT], ms_out_count(d) * sizeof(float)), 0);
    if (deterministic) {
        lesson_result g2;
        run_checked(impl, &p, t, ref, &g2);
        ck_assert_int_eq(memcmp(g.result[DB], g2.result[DB], ms_b_count(d) * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(g.result[DA], g2.result[DA], ms_a_count(d) * sizeof(float)), 0);
        lesson_result_free(L, &g2);
    }
    lesson_result_free(L, &g);
    lesson_result_free(L, &c);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

START_TEST(cuda_v2_tiny) { gpu_case("cuda", &TINY, 0, 0, 301); }
END_TEST
START_TEST(cuda_v2_small) { gpu_case("cuda", &SMALL, 0, 0, 302); }
END_TEST
START_TEST(cuda_v2_tiled) { gpu_case("cuda", &TILED, 0, 0, 303); }
END_TEST
START_TEST(cuda_v2_recompute_small) { gpu_case("cuda", &SMALL, 1, 0, 304); }
END_TEST
START_TEST(cuda_v2_deterministic_small) { gpu_case("cuda", &SMALL, 0, 1, 305); }
END_TEST
START_TEST(cuda_v2_recompute_deterministic_tiled) { gpu_case("cuda", &TILED, 1, 1, 306); }
END_TEST
START_TEST(cuda_v1_tiny) { gpu_case("cuda-v1", &TINY, 0, 0, 307); }
END_TEST
START_TEST(cuda_v1_small) { gpu_case("cuda-v1", &SMALL, 0, 0, 308); }
END_TEST
START_TEST(cuda_v1_recompute_deterministic_small) { gpu_case("cuda-v1", &SMALL, 1, 1, 309); }
END_TEST

Suite *cuda_lesson3_suite(void)
{
    Suite *s = suite_create("cuda-lesson3");
    TCase *t = tcase_create("maxsim");
    tcase_add_test(t, cuda_v2_tiny);
    tcase_add_test(t, cuda_v2_small);
    tcase_add_test(t, cuda_v2_tiled);
    tcase_add_test(t, cuda_v2_recompute_small);
    tcase_add_test(t, cuda_v2_deterministic_small);
    tcase_add_test(t, cuda_v2_recompute_deterministic_tiled);
    tcase_add_test(t, cuda_v1_tiny);
    tcase_add_test(t, cuda_v1_small);
    tcase_add_test(t, cuda_v1_recompute_deterministic_small);
    tcase_set_timeout(t, 300);
    suite_add_tcase(s, t);
    return s;
}
