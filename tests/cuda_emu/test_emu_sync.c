/* test_emu_sync.c - TEST-ONLY: planted barrier and warp-shuffle bugs (planted_sync.cu, planted_warp.cu), each
 * expected to fail for its own reason, and their correct twins expected to pass. Run by test_emu.c. */
#include <driver_types.h>
#include <math.h>

#include "planted.h"
#include "test_emu.h"

START_TEST(reverse_correct)
{
    fill();
    ck_assert_int_eq(planted_reverse(0, in, out, N_REV), cudaSuccess);
    for (int i = 0; i < N_REV; i++) ck_assert_float_eq(out[i], in[(i / 256) * 256 + 255 - i % 256]);
}
END_TEST

START_TEST(missing_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(1, in, out, N_REV), cudaErrorLaunchFailure);
    assert_message("depends on the order threads and blocks run in");
    assert_message("reverse_no_sync");
}
END_TEST

START_TEST(divergent_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(2, in, out, N_REV), cudaErrorLaunchFailure);
    assert_message("not every thread of the block reached it");
    assert_message("threads 0-127: waiting at __syncthreads");
    assert_message("threads 128-255: exited");
}
END_TEST

START_TEST(exit_before_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(3, in, out, 300), cudaErrorLaunchFailure);
    assert_message("block (1,0,0)");
    assert_message("threads 44-255: exited");
}
END_TEST

START_TEST(shuffle_sum_correct)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(0, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float s = 0.0f;
        for (int l = 0; l < 32; l++) s += in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], s, 1e-3f);
    }
}
END_TEST

/* A wrong offset sequence is no error to the hardware: the test sees the wrong number, and which one. */
START_TEST(shuffle_wrong_offsets)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(1, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float all = 0.0f, even = 0.0f;
        for (int l = 0; l < 32; l++) all += in[w * 32 + l], even += l % 2 ? 0.0f : in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], even, 1e-3f); /* offsets 16..2 sum the even lanes only */
        ck_assert(fabsf(sums[w] - all) > 1e-3f || fabsf(all - even) <= 1e-3f);
    }
}
END_TEST

START_TEST(shuffle_outside_mask)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(2, in, sums, N_REV), cudaErrorIllegalInstruction);
    assert_message("lane 0 of warp 0 reads lane 16, which is not in mask 0x0000ffff");
}
END_TEST

START_TEST(shuffle_half_warp_correct)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(3, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float s = 0.0f;
        for (int l = 0; l < 16; l++) s += in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], s, 1e-3f);
    }
}
END_TEST

Suite *emu_sync_suite(void)
{
    Suite *s = suite_create("cuda-emu-planted-sync");
    TCase *t = tcase_create("barriers-and-shuffles");
    tcase_add_test(t, reverse_correct);
    tcase_add_test(t, missing_syncthreads);
    tcase_add_test(t, divergent_syncthreads);
    tcase_add_test(t, exit_before_syncthreads);
    tcase_add_test(t, shuffle_sum_correct);
    tcase_add_test(t, shuffle_wrong_offsets);
    tcase_add_test(t, shuffle_outside_mask);
    tcase_add_test(t, shuffle_half_warp_correct);
    suite_add_tcase(s, t);
    return s;
}
