/* cuda_lesson2.c - lesson 2 on the GPU: the CUDA recursions within the float32 bound of the double reference,
 * and the device memory formula equal to the tracker. Run by test_cuda without fork.
 *
 * Run on the CPU emulator by make test-emu (tests/cuda_emu) and on an H200 by the GPU report
 * (docs/results/nvidia-h200/). Each version is named: cuda-v1 (log-space kernels), cuda-v2 (cuBLAS GEMMs + row
 * kernels), cuda-v3 (v2 as a graph), cuda-v4 (one persistent kernel) and cuda-v5 (v4's walk with P's rows in flight).
 *
 * Tolerances (the model of tests/test_lesson2.c): log Z within err_lz = 2 v eps (max|lz| + sqrt(c)); each
 * gradient element within delta = 3 err_lz relative to a per-element scale. For dx (one chain per element) the
 * scale is |ref|. dbulk and dp0 sum dout-weighted terms of both signs over the batch, so their scale is the same
 * sum with |dout|: the reference run once more with dout replaced by |dout| gives exactly sum_b |term_b|. The
 * kernels use expf/logf without fast math; the online logsumexp adds one rescale per 32-wide tile, i.e. c/32
 * more roundings per step, inside the sqrt(c) term. */
#include <check.h>

#include "cuda_suites.h"
#include <math.h>
#include <string.h>

#include "rng.h"
#include "track.h"
#include "../lessons/logchain_reference.h"
#include "lc_testing.h"
#include "../kernels/logchain_math.h"
#include "../optimized/logchain_forward.h"
#include "lesson.h"
#include "graph_twin.h"

extern const lesson lesson2_def;
#include "nan_testing.h"

#define EPS32 1.1920928955078125e-07

/* elements with |x - ref| > tol * scale (NaN included) */
static size_t outside(const float *x, const double *ref, const double *scale, size_t n, double tol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double s = scale ? scale[i] + 1e-30 : 1.0;
        if (!(fabs((double)x[i] - ref[i]) <= tol * s)) bad++;
    }
    return bad;
}

static void run_case_impl(lc_dims d, uint64_t seed, lc_impl impl)
{
    int walk = impl == LC_CUDA_V4 || impl == LC_CUDA_V5; /* one persistent kernel per pass: v4's fit and buffers */
    ck_assert(impl == LC_CUDA_V2 ? cuda_lc_dims_fit_v2(&d) : walk ? cuda_lc_dims_fit_v4(&d) : cuda_lc_dims_fit_v1(&d));
    rng r;
    rng_seed(&r, seed);
    float *x = host_alloc_array(lc_x_count(&d), DT_F32, "test x");
    float *bulk = host_alloc_array(lc_bulk_count(&d), DT_F32, "test bulk");
    float *p0 = host_alloc_array(lc_p0_count(&d), DT_F32, "test p0");
    float *dout = host_alloc_array(lc_out_count(&d), DT_F32, "test dout");
    float *adout = host_alloc_array(lc_out_count(&d), DT_F32, "test |dout|");
    rng_fill_normal_f32(&r, x, lc_x_count(&d), -2.0f, 1.0f);
    rng_fill_uniform_f32(&r, bulk, lc_bulk_count(&d), 1e-3f, 1.0f);
    rng_fill_uniform_f32(&r, p0, lc_p0_count(&d), 1e-3f, 1.0f);
    rng_fill_normal_f32(&r, dout, lc_out_count(&d), 0.0f, 1.0f);
    for (size_t i = 0; i < lc_out_count(&d); i++) adout[i] = fabsf(dout[i]);
    lc_outputs res = {host_alloc_array(lc_out_count(&d), DT_F32, "result out"),
                      host_alloc_array(lc_x_count(&d), DT_F32, "result dx"),
                      host_alloc_array(lc_bulk_count(&d), DT_F32, "result dbulk"),
                      host_alloc_array(lc_p0_count(&d), DT_F32, "result dp0")};
    lc_inputs in = {x, bulk, p0, dout};
    impl_row row;
    size_t dev_live = track_counters(MEM_DEVICE).live_bytes;
    row = lc_run(impl, &d, &in, &res);
    ck_assert_uint_eq(track_counters(MEM_DEVICE).live_bytes, dev_live);

    lc_memory m = lc_predict(impl, &d);
    ck_assert_uint_eq(row.peak_bytes, m.peak);
    ck_assert_uint_eq(row.forward_live_bytes, m.forward_live);
    /* v2: x, bulk, p0, workspace, alpha, out, W, S, m | dout, dbulk, dp0, W, U/S, mb  (dx reuses alpha)
     * v1: x, bulk, p0, alpha, out | dout, dbulk, dp0, beta x2
     * v4, v5: x, bulk, p0, workspace, alpha, out | dout, dbulk, dp0, U, W */
    ck_assert_uint_eq(row.allocs, impl == LC_CUDA_V2 ? 15 : walk ? 11 : 10);

    lc_ref_result ref, aref;
    lc_reference(&d, x, bulk, p0, dout, &ref);
    lc_reference(&d, x, bulk, p0, adout, &aref); /* sum_b |dout_b term_b|: the scale of dbulk and dp0 */
    double max_lz = 0.0;
    for (size_t i = 0; i < lc_out_count(&d); i++) max_lz = fmax(max_lz, fabs(ref.out[i]));
    double err = 2.0 * (double)d.v * EPS32 * (max_lz + sqrt((double)d.c)), delta = 3.0 * err;
    double *dx_scale = host_alloc_array(lc_x_count(&d), DT_F64, "test |dx ref|");
    for (size_t i = 0; i < lc_x_count(&d); i++) dx_scale[i] = fabs(ref.dx[i]);
    size_t bo = outside(res.out, ref.out, NULL, lc_out_count(&d), err);
    size_t bx = outside(res.dx, ref.dx, dx_scale, lc_x_count(&d), delta);
    size_t bb = outside(res.dbulk, ref.dbulk, aref.dbulk, lc_bulk_count(&d), delta);
    size_t bp = outside(res.dp0, ref.dp0, aref.dp0, lc_p0_count(&d), delta);
    ck_assert_msg(bo == 0 && bx == 0 && bb == 0 && bp == 0,
                  "%s at n=%zu t=%zu v=%zu c=%zu outside the bound: out %zu dx %zu dbulk %zu dp0 %zu",
                  lc_impl_name(impl), d.n, d.t,
                  d.v, d.c, bo, bx, bb, bp);
    host_free(dx_scale);
    lc_reference_free(&ref);
    lc_reference_free(&aref);
    host_free(res.out);
    host_free(res.dx);
    host_free(res.dbulk);
    host_free(res.dp0);
    host_free(x);
    host_free(bulk);
    host_free(p0);
    host_free(dout);
    host_free(adout);
}

static void run_case(lc_dims d, uint64_t seed) { run_case_impl(d, seed, LC_CUDA_V2); }

START_TEST(cuda_lc_tiny) { run_case((lc_dims){2, 1, 5, 3}, 201); }
END_TEST
START_TEST(cuda_lc_small) { run_case((lc_dims){10, 1, 6, 40}, 202); }
END_TEST
/* n not a multiple of 8, c not a multiple of 32, t > 1: every tile edge and the chain-position stride */
START_TEST(cuda_lc_odd_sizes) { run_case((lc_dims){37, 2, 9, 45}, 203); }
END_TEST
START_TEST(cuda_lc_medium) { run_case((lc_dims){100, 1, 40, 100}, 204); }
END_TEST
/* the forum's chain (v = 40 steps of c = 200 states, where rounding accumulates) on 50 of its 500 rows: each row
 * is a chain of its own, run by the same blocks' code, so the other 450 would add emulator time, not
 * coverage; the dry run (make dry-run) checks the forum's 500-row launches and their boundary blocks */
START_TEST(cuda_lc_forum) { run_case((lc_dims){50, 1, 40, 200}, 205); }
END_TEST

/* cuda-v1 at the sizes that reach every tile edge */
START_TEST(cuda_lc_v1_tiny) { run_case_impl((lc_dims){2, 1, 5, 3}, 201, LC_CUDA_V1); }
END_TEST
START_TEST(cuda_lc_v1_odd_sizes) { run_case_impl((lc_dims){37, 2, 9, 45}, 203, LC_CUDA_V1); }
END_TEST
START_TEST(cuda_lc_v1_medium) { run_case_impl((lc_dims){100, 1, 40, 100}, 204, LC_CUDA_V1); }
END_TEST

/* cuda-v4 (one persistent kernel per pass): rows past n in the last block, c past a lane's first state, t > 1, and c
 * at its largest (every lane's 8 states). Its arithmetic over a long chain is v2's (the medium and forum cases). */
START_TEST(cuda_lc_v4_tiny) { run_case_impl((lc_dims){2, 1, 5, 3}, 201, LC_CUDA_V4); }
END_TEST
START_TEST(cuda_lc_v4_odd_sizes) { run_case_impl((lc_dims){37, 2, 9, 45}, 203, LC_CUDA_V4); }
END_TEST
START_TEST(cuda_lc_v4_max_c) { run_case_impl((lc_dims){5, 1, 3, LC4_MAX_C}, 208, LC_CUDA_V4); }
END_TEST
/* one state past a lane's 8: refused by the fit check, never launched */
START_TEST(cuda_lc_v4_unfit)
{
    lc_dims d = {5, 1, 3, LC4_MAX_C + 1};
    ck_assert(!cuda_lc_dims_fit_v4(&d));
    d.c = LC4_MAX_C;
    ck_assert(cuda_lc_dims_fit_v4(&d));
}
END_TEST

/* cuda-v5 (v4's walk, each warp's next rows of P copied into its own ring in shared memory, across steps): tiny,
 * c = 3, 5 of the 8 warps without a row; c = 45, the 4-byte copies (c % 4 != 0), rows past n in the last block,
 * t > 1; c at its largest; v = 2, one step, the ring's refill from the next step empty at once; v = 1, no step at
 * all (log Z from p0 and x_0); c = 4, one 16-byte word a row; around a lane's second word (k = 4 lane + 128):
 * c = 127 (lane 31's first word cut short), 128 (no second word), 129 (one state of lane 0's); and (tagged slow) the
 * forum's c = 200 over 40 steps, where each warp's ring crosses 39 step boundaries. */
static const struct {
    lc_dims d;
    uint64_t seed;
} v5_cases[] = {
    {{2, 1, 5, 3}, 211},   {{37, 2, 9, 45}, 213}, {{5, 1, 3, LC5_MAX_C}, 218}, {{6, 2, 2, 70}, 219},
    {{3, 1, 1, 33}, 220},  {{5, 1, 4, 4}, 221},   {{5, 1, 4, 127}, 222},       {{5, 1, 4, 128}, 223},
    {{5, 1, 4, 129}, 224},
};
START_TEST(cuda_lc_v5_cases) { run_case_impl(v5_cases[_i].d, v5_cases[_i].seed, LC_CUDA_V5); }
END_TEST
START_TEST(cuda_lc_v5_forum) { run_case_impl((lc_dims){9, 1, 40, 200}, 215, LC_CUDA_V5); }
END_TEST

/* cuda-v3 (v2's step loops as CUDA Graphs) against cuda (v2), which launches 2v - 1 times in forward (a row
 * kernel, then a GEMM and a row kernel per step) and 3v - 1 in backward (a kernel and two GEMMs per step, then
 * the dx0 and dp0 kernels). */
/* the problem struct is lc_problem (lessons/lesson2.h), whose one member is lc_dims: &d is its address */
static void graph_twin(lc_dims d, uint64_t seed) { run_graph_twin(&lesson2_def, &d, seed, "cuda-v2", "cuda-v3", 5 * d.v - 2); }

START_TEST(cuda_lc_graph_tiny) { graph_twin((lc_dims){2, 1, 5, 3}, 206); }
END_TEST
START_TEST(cuda_lc_graph_odd_sizes) { graph_twin((lc_dims){37, 2, 9, 45}, 207); }
END_TEST
/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN in chain (n,t) reaches that chain and dbulk[t], dp0[t] only; -inf is log 0 and keeps everything finite): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_cuda_nan) { ck_assert_uint_eq(nan_lesson2("cuda-v2", NAN), 0); }
END_TEST
START_TEST(nan_rule_cuda_neg_inf) { ck_assert_uint_eq(nan_lesson2("cuda-v2", -INFINITY), 0); }
END_TEST
START_TEST(nan_rule_cuda_v1_nan) { ck_assert_uint_eq(nan_lesson2("cuda-v1", NAN), 0); }
END_TEST
START_TEST(nan_rule_cuda_v1_neg_inf) { ck_assert_uint_eq(nan_lesson2("cuda-v1", -INFINITY), 0); }
END_TEST
START_TEST(nan_rule_cuda_v4_nan) { ck_assert_uint_eq(nan_lesson2("cuda-v4", NAN), 0); }
END_TEST
START_TEST(nan_rule_cuda_v4_neg_inf) { ck_assert_uint_eq(nan_lesson2("cuda-v4", -INFINITY), 0); }
END_TEST
START_TEST(nan_rule_cuda_v5_nan) { ck_assert_uint_eq(nan_lesson2("cuda-v5", NAN), 0); }
END_TEST
START_TEST(nan_rule_cuda_v5_neg_inf) { ck_assert_uint_eq(nan_lesson2("cuda-v5", -INFINITY), 0); }
END_TEST

Suite *cuda_lesson2_suite(void)
{
    Suite *s = suite_create("cuda-lesson2");
    TCase *t = tcase_create("log-space-recursions");
    tcase_add_test(t, cuda_lc_tiny);
    tcase_add_test(t, cuda_lc_small);
    tcase_add_test(t, cuda_lc_odd_sizes);
    tcase_add_test(t, cuda_lc_medium);
    tcase_add_test(t, cuda_lc_v1_tiny);
    tcase_add_test(t, cuda_lc_v1_odd_sizes);
    tcase_add_test(t, cuda_lc_v4_tiny);
    tcase_add_test(t, cuda_lc_v4_odd_sizes);
    tcase_add_test(t, cuda_lc_v4_max_c);
    tcase_add_test(t, cuda_lc_v4_unfit);
    tcase_add_loop_test(t, cuda_lc_v5_cases, 0, (int)(sizeof v5_cases / sizeof v5_cases[0]));
    tcase_add_test(t, cuda_lc_graph_tiny);
    tcase_add_test(t, cuda_lc_graph_odd_sizes);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    /* the sizes that take the emulator most of this suite's time, tagged "slow": CI's re-runs of test_cuda under
     * ASan and with FMA contraction leave them out (CK_EXCLUDE_TAGS=slow); the plain emulation run keeps them */
    TCase *large = tcase_create("log-space-recursions-large");
    tcase_set_tags(large, "slow");
    tcase_add_test(large, cuda_lc_forum);
    tcase_add_test(large, cuda_lc_v1_medium);
    tcase_add_test(large, cuda_lc_v5_forum);
    tcase_set_timeout(large, 120);
    suite_add_tcase(s, large);
    TCase *nanc = tcase_create("nan-inf");
    tcase_add_test(nanc, nan_rule_cuda_nan);
    tcase_add_test(nanc, nan_rule_cuda_neg_inf);
    tcase_add_test(nanc, nan_rule_cuda_v1_nan);
    tcase_add_test(nanc, nan_rule_cuda_v1_neg_inf);
    tcase_add_test(nanc, nan_rule_cuda_v4_nan);
    tcase_add_test(nanc, nan_rule_cuda_v4_neg_inf);
    tcase_add_test(nanc, nan_rule_cuda_v5_nan);
    tcase_add_test(nanc, nan_rule_cuda_v5_neg_inf);
    suite_add_tcase(s, nanc);
    return s;
}
