/* test_emu.c - TEST-ONLY: proof that the CPU emulator catches what it must. Each planted bug (planted_*.cu)
 * must fail for its own reason -- the error code and the recorded message are both checked -- and each
 * correct twin must pass with the right numbers.
 *
 * Runs forked (Check's default), unlike test_cuda: the emulator is ordinary host memory in one thread, with no
 * driver state, so a fork copies it whole; and under ASan an out-of-bounds write ends the process, which only
 * a forked test can expect (ASan's exit code is set to 23 below, so the test knows it was ASan). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../check_main.h"
#include <check.h>
#include <driver_types.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/runtime/cuda_track.h"
#include "planted.h"
#include "test_emu.h"

#ifdef __SANITIZE_ADDRESS__
#define ASAN_EXIT 23
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "exitcode=23"; }
#endif

enum { BLAS_OK = 0, BLAS_INVALID_VALUE = 7, BLAS_EXECUTION_FAILED = 13, BLAS_NOT_SUPPORTED = 15 }; /* cublasStatus_t */

START_TEST(out_of_bounds_write)
{
    fill();
#ifdef ASAN_EXIT
    fprintf(stderr, "test_emu: the AddressSanitizer report that follows is EXPECTED (planted out-of-bounds write)\n");
#endif
    int e = planted_scale(1, in, out, 100);
#ifdef ASAN_EXIT
    (void)e;
    ck_abort_msg("ASan should have ended the process at the write past the end");
#else
    ck_assert_int_eq(e, cudaErrorIllegalAddress);
    assert_message("scale_off_by_one");
    assert_message("write at byte 400 of a 400-byte device allocation (0 past its end)");
#endif
}
END_TEST

START_TEST(host_pointer_argument)
{
    fill();
    ck_assert_int_eq(planted_scale(2, in, out, 100), cudaErrorIllegalAddress);
    assert_message("is not in any live device allocation");
}
END_TEST

START_TEST(block_too_large)
{
    fill();
    ck_assert_int_eq(planted_scale(3, in, out, 100), cudaErrorInvalidConfiguration);
    assert_message("block too large");
}
END_TEST

#define GM 8
#define GN 4
#define GK 16
static float A[GM * GK], B[GK * GN], C[GM * GN];

static void gemm_inputs(void)
{
    for (int i = 0; i < GM * GK; i++) A[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < GK * GN; i++) B[i] = (float)(i % 5) - 2.0f;
    emu_clear_error();
}

START_TEST(gemm_correct)
{
    gemm_inputs();
    ck_assert_int_eq(planted_gemm(0, A, B, C, GM, GN, GK), BLAS_OK);
    for (int i = 0; i < GM; i++)
        for (int j = 0; j < GN; j++) {
            float s = 0.0f;
            for (int k = 0; k < GK; k++) s += A[i * GK + k] * B[k * GN + j];
            ck_assert_float_eq(C[i * GN + j], s); /* small integers: exact in any order */
        }
}
END_TEST

START_TEST(gemm_transposed_ld)
{
    gemm_inputs();
    ck_assert_int_eq(planted_gemm(1, A, B, C, GM, GN, GK), BLAS_INVALID_VALUE); /* ldb = 8 < k = 16 */
}
END_TEST

START_TEST(gemm_ld_past_the_end)
{
    gemm_inputs();
    ck_assert_int_eq(planted_gemm(2, A, B, C, GM, GN, GK), BLAS_EXECUTION_FAILED);
    assert_message("operand B of batch 0 (16 x 8, ld 32");
}
END_TEST

START_TEST(gemm_ex_bf16)
{
    float C2[2 * GM * GN];
    gemm_inputs(); /* small integers: exact in bf16, and their products' sums exact in f32 */
    ck_assert_int_eq(planted_gemm_ex(1, A, B, C2, GM, GN, GK), BLAS_OK);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < GM; i++)
            for (int j = 0; j < GN; j++) {
                float s = 0.0f;
                for (int k = 0; k < GK; k++) s += A[i * GK + k] * B[k * GN + j];
                ck_assert_float_eq(C2[b * GM * GN + i * GN + j], s);
            }
}
END_TEST

START_TEST(gemm_ex_unsupported_types)
{
    float C2[2 * GM * GN];
    gemm_inputs();
    ck_assert_int_eq(planted_gemm_ex(0, A, B, C2, GM, GN, GK), BLAS_NOT_SUPPORTED);
}
END_TEST

/* cuda_track.cu's device discovery (issue 6): only "no GPU" is a skip; a driver error fails loudly. */
START_TEST(no_device_is_a_skip)
{
    const char *why = NULL;
    setenv("EMU_DEVICE_ERROR", "no-device", 1);
    ck_assert_int_eq(cuda_device_count(&why), 0);
    ck_assert_str_eq(why, "no CUDA-capable device is detected");
}
END_TEST

START_TEST(no_driver_is_a_skip)
{
    const char *why = NULL;
    setenv("EMU_DEVICE_ERROR", "no-driver", 1); /* cudaErrorInsufficientDriver with driver version 0 */
    ck_assert_int_eq(cuda_device_count(&why), 0);
    ck_assert_str_eq(why, "no NVIDIA driver installed");
}
END_TEST

START_TEST(skip_with_require_device_is_a_failure)
{
    setenv("EMU_DEVICE_ERROR", "no-device", 1);
    setenv("CUDA_REQUIRE_DEVICE", "1", 1);
    (void)cuda_device_count(NULL); /* exits 4 */
}
END_TEST

START_TEST(driver_error_is_a_failure)
{
    setenv("EMU_DEVICE_ERROR", "driver", 1);
    (void)cuda_device_count(NULL); /* prints the error and both versions, exits 4 */
}
END_TEST

START_TEST(cublas_handle_untracked_bytes)
{
    ck_assert_int_eq(cuda_device_count(NULL), 1);
    ck_assert_ptr_nonnull(cublas_handle());
    ck_assert_uint_eq(cublas_untracked_bytes(), 0); /* the shim's handle holds no device memory */
}
END_TEST

/* nvcuda::wmma (planted_wmma.cu): inputs on a 1/8 grid with |x| <= 1, so every product (a multiple of 1/64)
 * and every sum of 16 of them is exact in float, tf32 and bf16: the right answer is known exactly and the
 * correct variants are compared bitwise. */
#define WT 16
static float WA[WT * WT], WB[WT * WT], WC0[WT * WT], WC[WT * WT];

static void wmma_inputs(void)
{
    for (int i = 0; i < WT * WT; i++) {
        WA[i] = (float)((i * 7) % 17 - 8) / 8.0f;
        WB[i] = (float)((i * 5) % 13 - 6) / 8.0f;
        WC0[i] = (float)(i % 11 - 5) / 8.0f;
        WC[i] = NAN;
    }
    emu_clear_error();
}

/* how many elements of WC differ from C0 + A . B (computed in double, exact here) */
static int wmma_wrong(void)
{
    int wrong = 0;
    for (int r = 0; r < WT; r++)
        for (int c = 0; c < WT; c++) {
            double s = WC0[r * WT + c];
            for (int k = 0; k < WT; k++) s += (double)WA[r * WT + k] * WB[k * WT + c];
            wrong += WC[r * WT + c] != (float)s;
        }
    return wrong;
}

START_TEST(wmma_correct_variants)
{
    static const int variants[] = {WMMA_TF32, WMMA_TF32_RAW, WMMA_TF32_COL_MAJOR, WMMA_BF16};
    for (int v = 0; v < 4; v++) {
        wmma_inputs();
        ck_assert_int_eq(planted_wmma(variants[v], WA, WB, WC0, WC), 0);
        ck_assert_msg(wmma_wrong() == 0, "variant %d: %d of 256 elements wrong", variants[v], wmma_wrong());
    }
}
END_TEST

/* A's row 0 is x e_0 (x in A[0][0], the rest 0), B the identity, C0 zero: C[0][0] is the tensor core's x */
static float wmma_operand(int variant, float x)
{
    wmma_inputs();
    for (int i = 0; i < WT * WT; i++) WA[i] = 0.0f, WB[i] = (float)(i % (WT + 1) == 0), WC0[i] = 0.0f;
    WA[0] = x;
    ck_assert_int_eq(planted_wmma(variant, WA, WB, WC0, WC), 0);
    return WC[0];
}

START_TEST(wmma_tf32_rounding)
{
    const float ulp = 1.0f / 1024.0f; /* tf32 keeps 10 mantissa bits */
    /* __float_to_tf32 (cvt.rna): nearest, ties away from zero -- ties-to-even would give 1 and -1 */
    ck_assert_float_eq(wmma_operand(WMMA_TF32, 1.0f + ulp / 2), 1.0f + ulp);
    ck_assert_float_eq(wmma_operand(WMMA_TF32, -1.0f - ulp / 2), -1.0f - ulp);
    ck_assert_float_eq(wmma_operand(WMMA_TF32, 1.0f + 0.75f * ulp), 1.0f + ulp);
    /* unconverted floats: the low 13 bits are dropped */
    ck_assert_float_eq(wmma_operand(WMMA_TF32_RAW, 1.0f + 0.75f * ulp), 1.0f);
    ck_assert_float_eq(wmma_operand(WMMA_TF32_RAW, -1.0f - 0.75f * ulp), -1.0f);
}
END_TEST

START_TEST(wmma_bf16_operands)
{
    /* bf16 keeps 7 mantissa bits: 1 + 2^-9 rounds to 1 when A is converted to __nv_bfloat16 */
    ck_assert_float_eq(wmma_operand(WMMA_BF16, 1.0f + 1.0f / 512), 1.0f);
    ck_assert_float_eq(wmma_operand(WMMA_BF16, 1.0f + 3.0f / 512), 1.0f + 1.0f / 128);
}
END_TEST

START_TEST(wmma_layout_assumed)
{
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_ASSUMES_LAYOUT, WA, WB, WC0, WC), 0); /* no error: just wrong */
    ck_assert_int_gt(wmma_wrong(), 128); /* the register order drawn away from the one it assumes: all 256 land elsewhere */
}
END_TEST

START_TEST(wmma_misaligned)
{
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_MISALIGNED, WA, WB, WC0, WC), cudaErrorMisalignedAddress);
    assert_message("wmma::load_matrix_sync at tests/cuda_emu/planted_wmma.cu:");
    assert_message("is not 256-bit (32-byte) aligned");
}
END_TEST

START_TEST(wmma_bad_ldm)
{
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_BAD_LDM, WA, WB, WC0, WC), cudaErrorMisalignedAddress);
    assert_message("ldm 18 is not a multiple of 4 (4-byte elements");
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_BF16_BAD_LDM, WA, WB, WC0, WC), cudaErrorMisalignedAddress);
    assert_message("ldm 12 is not a multiple of 8 (2-byte elements");
}
END_TEST

START_TEST(wmma_half_warp)
{
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_HALF_WARP, WA, WB, WC0, WC), cudaErrorIllegalInstruction);
    assert_message("kernel wmma_half_warp");
    assert_message("nvcuda::wmma at tests/cuda_emu/planted_wmma.cu:");
    assert_message("has exited");
}
END_TEST

START_TEST(wmma_lane_pointers)
{
    wmma_inputs();
    ck_assert_int_eq(planted_wmma(WMMA_LANE_POINTERS, WA, WB, WC0, WC), cudaErrorIllegalInstruction);
    assert_message("lane 1 passes (mptr");
    assert_message("every lane must pass the same");
}
END_TEST

Suite *emu_suite(void);
Suite *emu_suite(void)
{
    Suite *s = suite_create("cuda-emu-planted");
    TCase *t = tcase_create("planted-memory-cublas");
#ifdef ASAN_EXIT
    tcase_add_exit_test(t, out_of_bounds_write, ASAN_EXIT);
#else
    tcase_add_test(t, out_of_bounds_write);
#endif
    tcase_add_test(t, host_pointer_argument);
    tcase_add_test(t, block_too_large);
    tcase_add_test(t, gemm_correct);
    tcase_add_test(t, gemm_transposed_ld);
    tcase_add_test(t, gemm_ld_past_the_end);
    tcase_add_test(t, gemm_ex_bf16);
    tcase_add_test(t, gemm_ex_unsupported_types);
    suite_add_tcase(s, t);
    TCase *d = tcase_create("cuda-track");
    tcase_add_test(d, no_device_is_a_skip);
    tcase_add_test(d, no_driver_is_a_skip);
    tcase_add_exit_test(d, skip_with_require_device_is_a_failure, 4);
    tcase_add_exit_test(d, driver_error_is_a_failure, 4);
    tcase_add_test(d, cublas_handle_untracked_bytes);
    suite_add_tcase(s, d);
    TCase *w = tcase_create("planted-wmma");
    tcase_add_test(w, wmma_correct_variants);
    tcase_add_test(w, wmma_tf32_rounding);
    tcase_add_test(w, wmma_bf16_operands);
    tcase_add_test(w, wmma_layout_assumed);
    tcase_add_test(w, wmma_misaligned);
    tcase_add_test(w, wmma_bad_ldm);
    tcase_add_test(w, wmma_half_warp);
    tcase_add_test(w, wmma_lane_pointers);
    suite_add_tcase(s, w);
    return s;
}

int main(void)
{
    unsetenv("EMU_WATCH"); /* the planted bugs are there for the eyes: never off in this suite */
    SRunner *sr = srunner_create(emu_suite());
    srunner_add_suite(sr, emu_sync_suite());
    srunner_add_suite(sr, emu_graph_suite());
    srunner_add_suite(sr, emu_limits_suite());
    srunner_add_suite(sr, emu_eyes_suite());
    srunner_add_suite(sr, emu_async_suite());
    srunner_add_suite(sr, emu_mma_suite());
    srunner_add_suite(sr, emu_hopper_suite());
    srunner_add_suite(sr, emu_model_suite());
    return check_run_selected(sr, "test_emu"); /* CK_VERBOSITY=verbose names every test */
}
