/* test_emu_async.c - TEST-ONLY: cp.async (planted_async.cu): the pipeline primitives with zero fill, a
 * cuda::barrier, a cuda::pipeline, and the planted bugs -- a read before the wait, misalignment, a size cp.async
 * does not take -- each failing for its own reason. Run by test_emu.c. */
#include <driver_types.h>
#include <math.h>

#include "planted.h"
#include "test_emu.h"

#define N_ASYNC 1798 /* three blocks of three 256-float tiles, the last copy zero-filled past n */
static float a_in[N_ASYNC], a_out[N_ASYNC];

static void fill_async(void)
{
    for (int i = 0; i < N_ASYNC; i++) a_in[i] = (float)(i % 89) - 30.0f, a_out[i] = 0.0f;
    emu_clear_error();
}

static void assert_doubled(int n)
{
    for (int i = 0; i < n; i++) ck_assert_msg(a_out[i] == 2.0f * a_in[i], "out[%d] = %g, not %g", i, a_out[i], 2.0f * a_in[i]);
}

/* A read before the copy landed: the eyes name it; under ASan (no eyes) the read sees the poison. */
static void assert_read_before_landing(int bug, int n, const char *kernel)
{
    fill_async();
    int err = planted_async(bug, a_in, a_out, n);
#ifdef __SANITIZE_ADDRESS__ /* the poison reaches the output, or the two passes read different poison */
    if (err == cudaSuccess) {
        int nan = 0;
        for (int i = 0; i < n; i++) nan += isnan(a_out[i]);
        ck_assert_msg(nan > 0, "no poison seen by a read before the copy landed");
        return;
    }
    ck_assert_int_eq(err, cudaErrorLaunchFailure);
    assert_message("depends on the order threads and blocks run in");
#else
    ck_assert_int_eq(err, cudaErrorLaunchFailure);
    assert_message("shared memory read before its cp.async landed");
    assert_message("planted_async.cu");
#endif
    assert_message(kernel);
}

START_TEST(primitives_correct)
{
    fill_async();
    ck_assert_int_eq(planted_async(0, a_in, a_out, N_ASYNC), cudaSuccess);
    assert_doubled(N_ASYNC);
}
END_TEST

START_TEST(primitives_missing_wait) { assert_read_before_landing(1, N_ASYNC, "async_stream"); }
END_TEST

START_TEST(primitives_wait_one_batch_short) { assert_read_before_landing(2, N_ASYNC, "async_stream"); }
END_TEST

START_TEST(primitives_misaligned)
{
    fill_async();
    ck_assert_int_eq(planted_async(3, a_in, a_out, N_ASYNC), cudaErrorMisalignedAddress);
    assert_message("both must be aligned to 16 bytes");
}
END_TEST

START_TEST(primitives_bad_size)
{
    fill_async();
    ck_assert_int_eq(planted_async(4, a_in, a_out, N_ASYNC), cudaErrorInvalidValue);
    assert_message("copies 12 bytes (4, 8 or 16 only)");
}
END_TEST

START_TEST(barrier_correct)
{
    fill_async();
    ck_assert_int_eq(planted_async(5, a_in, a_out, 1536), cudaSuccess);
    assert_doubled(1536);
}
END_TEST

START_TEST(barrier_read_before_wait) { assert_read_before_landing(6, 1536, "barrier_tile"); }
END_TEST

START_TEST(pipeline_correct)
{
    fill_async();
    ck_assert_int_eq(planted_async(7, a_in, a_out, 1536), cudaSuccess);
    assert_doubled(1536);
}
END_TEST

Suite *emu_async_suite(void)
{
    Suite *s = suite_create("cuda-emu-async");
    TCase *t = tcase_create("cp-async");
    tcase_add_test(t, primitives_correct);
    tcase_add_test(t, primitives_missing_wait);
    tcase_add_test(t, primitives_wait_one_batch_short);
    tcase_add_test(t, primitives_misaligned);
    tcase_add_test(t, primitives_bad_size);
    tcase_add_test(t, barrier_correct);
    tcase_add_test(t, barrier_read_before_wait);
    tcase_add_test(t, pipeline_correct);
    suite_add_tcase(s, t);
    return s;
}
