/* cuda_lesson5.c - lesson 5 on the GPU (or under the CPU emulation of CUDA): the cuda and cuda-v2 implementations
 * (cuda-v2's cases and tolerances are derived above them, at "cuda-v2"); the cuda implementation within the
 * lesson's bound of the float64 reference, close to cpu (the same algorithm), no less accurate than naive, and
 * its device memory formula equal to the tracker. Run by test_cuda without fork; small sizes so the emulation
 * is quick.
 *
 * NOT YET RUN: written and compiled on a machine without a GPU (see docs/lesson-5.md).
 *
 * Tolerances: against float64, the lesson's 2u (u = 2^-8, see lessons/lesson5.c and tests/test_lesson5.c).
 * Against cpu: both round the same float32 gradient to bf16 and the same float32 sums of dx to bf16; only the
 * order of the float32 additions differs (cuBLAS's tiles versus OpenBLAS's), which can move a value across a
 * bf16 rounding boundary: one bf16 step, 2u relative, for dx; dW is float32 throughout but sums bf16 operands that
 * may differ by one step in a few elements, so also 2u of max|dW|. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "../kernels/linear_ce_problem.h"
#include "../optimized/linear_ce_fused.h"
#include "../kernels/runtime/track.h"
#include "../lessons/lesson5.h"


static void run_case(long long N, long long H, long long V, long long chunk, uint64_t seed)
{
    const lesson *L = &lesson5_def;
    long long dims[3] = {N, H, V}, opts[1] = {chunk};
    lesson_problem prob;
    ck_assert_ptr_null(L->make_problem(dims, opts, &prob));
    void *t[LESSON_MAX_TENSORS] = {0};
    double *ref[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(L, &prob, seed, t);
    ck_assert_ptr_null(lesson_make_reference(L, &prob, t, ref));
    int ic = lesson_find_impl(L, "cuda"), ip = lesson_find_impl(L, "cpu"), in = lesson_find_impl(L, "naive");
    lesson_result rc, rp, rn;
    size_t dev_live = track_counters(MEM_DEVICE).live_bytes;
    lesson_run_impl(L, &prob, ic, t, &rc);
    lesson_run_impl(L, &prob, ip, t, &rp);
    lesson_run_impl(L, &prob, in, t, &rn);
    ck_assert_uint_eq(track_counters(MEM_DEVICE).live_bytes, dev_live);

    mem_formula f = L->impls[ic].memory(&prob);
    ck_assert_uint_eq(rc.row.peak_bytes, f.peak);
    ck_assert_uint_eq(rc.row.forward_live_bytes, f.forward_live);
    ck_assert_uint_eq(rc.row.allocs, f.allocs);

    double ec = lesson_max_rel_err(L, &prob, &rc, ref), en = lesson_max_rel_err(L, &prob, &rn, ref);
    double ep = lesson_max_rel_err(L, &prob, &rp, ref);
    ck_assert_msg(ec <= 2.0 / 256.0, "cuda at N=%lld H=%lld V=%lld: max rel err %.3g", N, H, V, ec);
    /* [emu branch] was ec <= en: first run (CPU emulator, seed 504) gave cuda 0.00613 > naive 0.00563 with
     * cuda == cpu; naive's bf16 roundings fall elsewhere, so neither bounds the other. cuda rounds what cpu
     * rounds: no worse than the worse of the two CPU versions. */
    ck_assert_msg(ec <= fmax(en, ep), "cuda error %.3g above naive's %.3g and cpu's %.3g", ec, en, ep);
    size_t nx = lesson_tensor_count(L, DX, &prob), nw = lesson_tensor_count(L, DW, &prob);
    double mx = 0, mw = 0, dxm = 0, dwm = 0;
    for (size_t i = 0; i < nx; i++) {
        mx = fmax(mx, fabs(dtype_load(rc.result[DX], DT_BF16, i) - dtype_load(rp.result[DX], DT_BF16, i)));
        dxm = fmax(dxm, fabs(ref[DX][i]));
    }
    for (size_t i = 0; i < nw; i++) {
        mw = fmax(mw, fabs(dtype_load(rc.result[DW], DT_F32, i) - dtype_load(rp.result[DW], DT_F32, i)));
        dwm = fmax(dwm, fabs(ref[DW][i]));
    }
    ck_assert_msg(mx <= 2.0 / 256.0 * dxm && mw <= 2.0 / 256.0 * dwm, "cuda vs cpu: dx %.3g, dW %.3g", mx / dxm,
                  mw / dwm);
    double lc = dtype_load(rc.result[LOSS], DT_F32, 0), lp = dtype_load(rp.result[LOSS], DT_F32, 0);
    ck_assert_double_eq_tol(lc, lp, 1e-5 * fabs(lp)); /* float32 logits either way: ~H eps32 per logit */
    lesson_result_free(L, &rc);
    lesson_result_free(L, &rp);
    lesson_result_free(L, &rn);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

/* --- cuda-v2: no logits buffer ------------------------------------------------------------------------------
 * Tolerances: against float64, the lesson's 2u like every implementation (dx is rounded to bf16 once, from fp32
 * sums of an fp32 gradient: u, within 2u). dW never passes through bf16 in v2: the logit dot (H terms), expf and
 * the sum over rows (N terms) are fp32, about (H + N) eps32 = 2e-5 relative at small; 1e-3 leaves 50x margin
 * and still fails any path that rounds g or dW to bf16 (u = 3.9e-3). Memory: formula == tracker to the byte,
 * device memory back to where it was, and v2's peak under cuda's. */
static double tensor_rel_err(const lesson *L, const void *prob, const lesson_result *r, double *const *ref, int i,
                             dtype t)
{
    size_t n = lesson_tensor_count(L, i, prob);
    double m = 0.0, mr = 0.0;
    for (size_t k = 0; k < n; k++) {
        m = fmax(m, fabs(dtype_load(r->result[i], t, k) - ref[i][k]));
        mr = fmax(mr, fabs(ref[i][k]));
    }
    return mr > 0.0 ? m / mr : m;
}

/* ignore: 0 keeps lce_fill's targets (1 in 16 ignored, and row 1); 1 ignores every third row and rows 32..63
 * (a whole row tile of the dW kernel) and points row 0 at the last vocabulary row (a ragged V-tile) */
static void run_case_v2(long long N, long long H, long long V, uint64_t seed, int ignore)
{
    const lesson *L = &lesson5_def;
    long long dims[3] = {N, H, V}, opts[1] = {0};
    lesson_problem prob;
    ck_assert_ptr_null(L->make_problem(dims, opts, &prob));
    void *t[LESSON_MAX_TENSORS] = {0};
    double *ref[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(L, &prob, seed, t);
    if (ignore) {
        int32_t *tg = t[TARGET];
        for (long long n = 0; n < N; n++)
            if (n % 3 == 2 || (n >= 32 && n < 64)) tg[n] = LCE_IGNORE;
        tg[0] = (int32_t)(V - 1);
    }
    ck_assert_ptr_null(lesson_make_reference(L, &prob, t, ref));
    int i2 = lesson_find_impl(L, "cuda-v2"), i1 = lesson_find_impl(L, "cuda");
    ck_assert_int_ge(i2, 0);
    ck_assert_int_eq(L->impls[i2].uses_cublas, 0);
    ck_assert_ptr_null(L->impls[i2].unfit(&prob));
    lesson_result r2, r1;
    size_t dev_live = track_counters(MEM_DEVICE).live_bytes;
    lesson_run_impl(L, &prob, i2, t, &r2);
    ck_assert_uint_eq(track_counters(MEM_DEVICE).live_bytes, dev_live);
    lesson_run_impl(L, &prob, i1, t, &r1);

    mem_formula f = L->impls[i2].memory(&prob);
    ck_assert_uint_eq(r2.row.peak_bytes, f.peak);
    ck_assert_uint_eq(r2.row.forward_live_bytes, f.forward_live);
    ck_assert_uint_eq(r2.row.allocs, f.allocs);
    ck_assert_uint_lt(r2.row.peak_bytes, r1.row.peak_bytes);
    ck_assert_uint_lt(r2.row.forward_live_bytes, r1.row.forward_live_bytes);

    double e = lesson_max_rel_err(L, &prob, &r2, ref), ew = tensor_rel_err(L, &prob, &r2, ref, DW, DT_F32);
    ck_assert_msg(e <= 2.0 / 256.0, "cuda-v2 at N=%lld H=%lld V=%lld: max rel err %.3g", N, H, V, e);
    ck_assert_msg(ew <= 1e-3, "cuda-v2 dW (fp32 throughout) at N=%lld H=%lld V=%lld: rel err %.3g", N, H, V, ew);
    lesson_result_free(L, &r2);
    lesson_result_free(L, &r1);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

START_TEST(cuda_lce_v2_tiny) { run_case_v2(4, 3, 7, 511, 0); }
END_TEST
/* V = 1000: not a multiple of the 128 threads' logit blocks nor of the 32-row V-tiles; N = 37: a ragged row tile */
START_TEST(cuda_lce_v2_odd) { run_case_v2(37, 24, 1000, 512, 0); }
END_TEST
START_TEST(cuda_lce_v2_ignored) { run_case_v2(70, 16, 301, 513, 1); }
END_TEST
/* small: no logits buffer, so the peak is below cuda's even without cuda's 32 MiB cuBLAS workspace */
START_TEST(cuda_lce_v2_small)
{
    run_case_v2(256, 128, 4096, 514, 0);
    const lesson *L = &lesson5_def;
    long long dims[3] = {256, 128, 4096}, opts[1] = {0};
    lesson_problem prob;
    ck_assert_ptr_null(L->make_problem(dims, opts, &prob));
    mem_formula f2 = L->impls[lesson_find_impl(L, "cuda-v2")].memory(&prob);
    mem_formula f1 = L->impls[lesson_find_impl(L, "cuda")].memory(&prob);
    ck_assert_uint_lt(f2.peak, f1.peak - ((size_t)32 << 20));
}
END_TEST

START_TEST(cuda_lce_tiny) { run_case(4, 3, 7, 0, 501); }
END_TEST
/* rows not a multiple of anything, V not a multiple of the block (256), a ragged last chunk */
START_TEST(cuda_lce_odd) { run_case(37, 24, 1000, 6, 502); }
END_TEST
/* one chunk: every row's logits at once */
START_TEST(cuda_lce_one_chunk) { run_case(32, 16, 300, 32, 503); }
END_TEST
START_TEST(cuda_lce_small) { run_case(256, 128, 4096, 0, 504); }
END_TEST

/* cuda's memory formula follows its chunk (the traffic model's, or --chunk): formula == tracker at several, and
 * the logits workspace grows with it (chunk V 4 bytes, each arena piece rounded up to 256). */
START_TEST(cuda_lce_chunk_choices)
{
    const lesson *L = &lesson5_def;
    long long dims[3] = {64, 16, 500}, chunks[] = {1, 0, 5, 64};
    size_t peak_one_row = 0;
    int ic = lesson_find_impl(L, "cuda");
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        lesson_problem prob;
        ck_assert_ptr_null(L->make_problem(dims, &chunks[k], &prob));
        void *t[LESSON_MAX_TENSORS] = {0};
        lesson_make_inputs(L, &prob, 510 + k, t);
        lesson_result rc;
        lesson_run_impl(L, &prob, ic, t, &rc);
        mem_formula f = L->impls[ic].memory(&prob);
        ck_assert_uint_eq(rc.row.peak_bytes, f.peak);
        ck_assert_uint_eq(rc.row.forward_live_bytes, f.forward_live);
        ck_assert_uint_eq(rc.row.allocs, f.allocs);
        size_t rows = ((const lce_dims *)(const void *)&prob)->cuda_chunk;
        ck_assert_uint_eq(rows, chunks[k] ? (size_t)chunks[k] : lce_model_chunk(64, 16, 500));
        if (rows == 1) peak_one_row = rc.row.peak_bytes;
        /* logits: 64 rows of 500 f32 = 128,000 bytes (a multiple of 256) against 1 row's 2,000 rounded to 2,048 */
        if (rows == 64 && peak_one_row) ck_assert_uint_eq(rc.row.peak_bytes - peak_one_row, 128000 - 2048);
        lesson_result_free(L, &rc);
        lesson_free_slots(L, t);
    }
}
END_TEST

Suite *cuda_lesson5_suite(void); /* tests/test_cuda.c runs it */
Suite *cuda_lesson5_suite(void)
{
    Suite *s = suite_create("cuda-lesson5");
    TCase *t = tcase_create("fused-linear-ce");
    tcase_add_test(t, cuda_lce_tiny);
    tcase_add_test(t, cuda_lce_odd);
    tcase_add_test(t, cuda_lce_one_chunk);
    tcase_add_test(t, cuda_lce_small);
    tcase_add_test(t, cuda_lce_chunk_choices);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    TCase *t2 = tcase_create("cce-v2");
    tcase_add_test(t2, cuda_lce_v2_tiny);
    tcase_add_test(t2, cuda_lce_v2_odd);
    tcase_add_test(t2, cuda_lce_v2_ignored);
    tcase_add_test(t2, cuda_lce_v2_small);
    tcase_set_timeout(t2, 120);
    suite_add_tcase(s, t2);
    return s;
}
