/* cuda_lesson1.c - lesson 1 on the GPU: cuBLAS results within the float32 bound of the double reference,
 * and the device memory formula equal to the tracker. Run by test_cuda without fork. */
#include <check.h>

#include "cuda_suites.h"
#include <string.h>

#include "rng.h"
#include "track.h"
#include "bmm_testing.h"
#include "../lessons/bmm_reference.h"
#include "nan_testing.h"

static void run_case(bmm_dims d, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    float *x = host_alloc_array(bmm_x_count(&d), DT_F32, "test x");
    float *W = host_alloc_array(bmm_w_count(&d), DT_F32, "test W");
    float *dout = host_alloc_array(bmm_out_count(&d), DT_F32, "test dout");
    rng_fill_normal_f32(&r, x, bmm_x_count(&d), 0, 1);
    rng_fill_normal_f32(&r, W, bmm_w_count(&d), 0, 0.5f);
    rng_fill_normal_f32(&r, dout, bmm_out_count(&d), 0, 1);
    bmm_outputs res = {host_alloc_array(bmm_out_count(&d), DT_F32, "result out"),
                       host_alloc_array(bmm_x_count(&d), DT_F32, "result dx"),
                       host_alloc_array(bmm_w_count(&d), DT_F32, "result dW")};
    bmm_inputs in = {x, W, dout};
    impl_row row;
    size_t dev_live = track_counters(MEM_DEVICE).live_bytes;
    row = bmm_run(BMM_CUDA, &d, &in, &res);
    ck_assert_uint_eq(track_counters(MEM_DEVICE).live_bytes, dev_live);

    bmm_memory m = bmm_predict(BMM_CUDA, &d);
    ck_assert_uint_eq(row.peak_bytes, m.peak);
    ck_assert_uint_eq(row.forward_live_bytes, m.forward_live);
    ck_assert_uint_eq(row.allocs, 7); /* x, W, workspace, out | dout, dx, dW */

    /* cuBLAS's SGEMM in its default math mode is plain float32 (no TF32 unless asked for), so the same
     * recursive-summation bound holds; a different summation order (split-K, trees) only tightens it. */
    bmm_reference_result ref;
    bmm_reference(&d, x, W, dout, &ref);
    size_t bo = bmm_count_outside_bound(res.out, ref.out, ref.out_abs, bmm_out_count(&d), d.K);
    size_t bx = bmm_count_outside_bound(res.dx, ref.dx, ref.dx_abs, bmm_x_count(&d), d.N);
    size_t bw = bmm_count_outside_bound(res.dW, ref.dW, ref.dW_abs, bmm_w_count(&d), d.B);
    ck_assert_msg(bo == 0 && bx == 0 && bw == 0, "cuda at B=%zu outside the bound: out %zu dx %zu dW %zu", d.B, bo,
                  bx, bw);
    bmm_reference_free(&ref);
    host_free(res.out);
    host_free(res.dx);
    host_free(res.dW);
    host_free(x);
    host_free(W);
    host_free(dout);
}

START_TEST(cuda_bmm_tiny) { run_case((bmm_dims){3, 2, 4, 5}, 101); }
END_TEST
START_TEST(cuda_bmm_small) { run_case((bmm_dims){512, 8, 64, 64}, 102); }
END_TEST
START_TEST(cuda_bmm_odd_sizes) { run_case((bmm_dims){333, 3, 17, 29}, 103); }
END_TEST
START_TEST(cuda_bmm_forum) { run_case((bmm_dims){8192, 8, 64, 64}, 104); }
END_TEST

/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN or +Inf in row b of x reaches out[b,g,:] and dW[g,k,:] only): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_cuda_nan) { ck_assert_uint_eq(nan_lesson1("cuda-v1", NAN), 0); }
END_TEST
START_TEST(nan_rule_cuda_inf) { ck_assert_uint_eq(nan_lesson1("cuda-v1", INFINITY), 0); }
END_TEST

Suite *cuda_lesson1_suite(void)
{
    Suite *s = suite_create("cuda-lesson1");
    TCase *t = tcase_create("grouped-gemm");
    tcase_add_test(t, cuda_bmm_tiny);
    tcase_add_test(t, cuda_bmm_small);
    tcase_add_test(t, cuda_bmm_odd_sizes);
    tcase_add_test(t, cuda_bmm_forum);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    TCase *nanc = tcase_create("nan-inf");
    tcase_add_test(nanc, nan_rule_cuda_nan);
    tcase_add_test(nanc, nan_rule_cuda_inf);
    suite_add_tcase(s, nanc);
    return s;
}
