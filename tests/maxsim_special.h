/* maxsim_special.h - lesson 3 with NaN and Inf in its inputs, for test_lesson3.c (CPU) and cuda_lesson3.c (CUDA).
 * Include after kernels/maxsim.h (MS_A, MS_B, MS_OUT, ...: lesson3.c's tensor order).
 *
 * The lesson's max is PyTorch's (kernels/maxsim.h): a NaN score wins, with the lowest n among NaNs, so NaN
 * reaches out[i, m] and db[m, n] at the NaN's own index, and the argmax is always a real column (before that
 * rule, a NaN row left the CUDA argmax at the sentinel N and backward read and wrote past b and db). The float64
 * reference applies the same rule, and IEEE arithmetic puts NaN and +-Inf in the same places in float and double
 * here (the grid inputs are small: nothing finite overflows), so every output is compared by class -- NaN, +Inf,
 * -Inf or finite must match element for element -- and the finite elements by the lesson's tolerance. Out-of-
 * bounds accesses are the emulator's (red zones) and ASan's to catch: these cases run under both.
 * naive is the exception for the gradients, as PyTorch's einsum is: its backward is two dense GEMMs over the
 * mostly-zero dscores, and 0 * NaN = 0 * Inf = NaN (OpenBLAS, like any optimized GEMM, does not skip zeros),
 * so NaN spreads along the whole k column of a NaN or Inf input in da or db. For it (dense = 1) a gradient
 * element may be NaN where the reference is finite, never the other way round. */
#ifndef TESTS_MAXSIM_SPECIAL_H
#define TESTS_MAXSIM_SPECIAL_H

#include <check.h>
#include <math.h>
#include <string.h>

#include "../kernels/maxsim.h"
#include "lesson.h"

extern const lesson lesson3_def;

enum ms_special {
    MS_NAN_IN_A, /* a[0, 1, 0] and the last element of a are NaN: rows 1 and R-1 score NaN everywhere */
    MS_NAN_IN_B, /* b[1, 2, K-1] and b[M-1, N-1, 0] are NaN: columns (1, 2) and (M-1, N-1) score NaN for every row */
    MS_INF       /* b[0, N-1, 0] = +Inf and a's last element = -Inf: +-Inf scores, ties among +Inf, Inf * 0 = NaN */
};

static inline void ms_plant_special(const ms_dims *d, int which, float *a, float *b)
{
    size_t K = d->K, N = d->N, M = d->M;
    /* the planted elements must exist: a[1, ...] needs two rows of a, b[1, 2, ...] needs M >= 2 and N >= 3 */
    ck_assert_msg(which != MS_NAN_IN_A || ms_a_count(d) > K, "MS_NAN_IN_A needs I*J >= 2");
    ck_assert_msg(which != MS_NAN_IN_B || (M >= 2 && N >= 3), "MS_NAN_IN_B needs M >= 2 and N >= 3 (M=%zu, N=%zu)", M, N);
    if (which == MS_NAN_IN_A) a[1 * K] = NAN, a[ms_a_count(d) - 1] = NAN;
    if (which == MS_NAN_IN_B) b[(1 * N + 2) * K + K - 1] = NAN, b[((M - 1) * N + N - 1) * K] = NAN;
    if (which == MS_INF) b[(N - 1) * K] = INFINITY, a[ms_a_count(d) - 1] = -INFINITY;
}

/* 0 NaN, 1 +Inf, 2 -Inf, 3 finite */
static inline int ms_class(double x) { return isnan(x) ? 0 : isinf(x) ? (x > 0 ? 1 : 2) : 3; }

/* Elements whose class differs from the reference's (dense: x may be NaN where ref is finite); *rel: max
 * |x - ref| / max |ref| over the elements finite in both; *specials: the reference's non-finite elements. */
static inline size_t ms_special_mismatch(const float *x, const double *ref, size_t n, int dense, size_t *specials,
                                         double *rel)
{
    size_t bad = 0;
    double mx = 0, big = 0;
    *specials = 0;
    for (size_t e = 0; e < n; e++) {
        int cx = ms_class(x[e]), cr = ms_class(ref[e]);
        bad += cx != cr && !(dense && cx == 0 && cr == 3);
        *specials += ms_class(ref[e]) != 3;
        if (ms_class(ref[e]) == 3 && ms_class(x[e]) == 3) mx = fmax(mx, fabs(x[e] - ref[e])), big = fmax(big, fabs(ref[e]));
    }
    *rel = big > 0 ? mx / big : mx;
    return bad;
}

/* --precision for the cases below (cuda-v5's operand type; the other implementations ignore it) */
static long long ms_test_precision;

/* impl on the seeded grid inputs with `which` planted, against the float64 reference, output by output. */
static inline void ms_special_case(const char *impl, const ms_dims *d, int which, int recompute, int deterministic,
                                   uint64_t seed)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    long long dims[5] = {(long long)d->I, (long long)d->J, (long long)d->M, (long long)d->N, (long long)d->K};
    long long opts[3] = {recompute, deterministic, ms_test_precision};
    ck_assert_ptr_null(L->make_problem(dims, opts, &p));
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &p, seed, t);
    ms_plant_special(d, which, t[MS_A], t[MS_B]);
    ck_assert_ptr_null(lesson_make_reference(L, &p, t, ref));
    lesson_result res;
    lesson_run_impl(L, &p, lesson_find_impl(L, impl), t, &res);
    ck_assert_uint_eq(res.row.peak_bytes, L->impls[lesson_find_impl(L, impl)].memory(&p).peak);
    static const int outs[] = {MS_OUT, MS_DA, MS_DB};
    size_t specials_out = 0;
    for (int k = 0; k < 3; k++) {
        size_t specials;
        double rel;
        int dense = outs[k] != MS_OUT && strcmp(impl, "naive") == 0;
        size_t bad = ms_special_mismatch(res.result[outs[k]], ref[outs[k]], lesson_tensor_count(L, outs[k], &p),
                                         dense, &specials, &rel);
        ck_assert_msg(bad == 0, "%s, case %d: %zu elements of %s are not NaN/Inf where the reference is (or are)",
                      impl, which, bad, L->tensors[outs[k]].name);
        ck_assert_msg(rel <= L->tolerance, "%s, case %d: %s max rel err %g", impl, which, L->tensors[outs[k]].name, rel);
        if (outs[k] == MS_OUT) specials_out = specials;
    }
    ck_assert_msg(specials_out > 0, "case %d reaches out: NaN or Inf in out", which); /* the case tests something */
    lesson_result_free(L, &res);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

#endif
