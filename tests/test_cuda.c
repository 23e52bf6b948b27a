/* test_cuda.c - the GPU test runner. Runs every lesson's CUDA suite when a device exists, without fork (CUDA
 * state does not survive fork), and skips with one clear line when there is none. Built only with CUDA. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kernels/cuda_track.h"

Suite *cuda_lesson1_suite(void);
/* Later lessons add their suites here; weak, so a lesson's suite is optional at link time. */
Suite *cuda_lesson2_suite(void) __attribute__((weak));
Suite *cuda_lesson4_suite(void) __attribute__((weak));

int main(void)
{
    const char *why = "unknown";
    if (cuda_device_count(&why) == 0) {
        printf("test_cuda: skipped: no CUDA device (%s); the CUDA code was compiled and linked but not run\n", why);
        return EXIT_SUCCESS;
    }
    printf("test_cuda: running on %s\n", cuda_device_name());
    SRunner *sr = srunner_create(cuda_lesson1_suite());
    if (cuda_lesson2_suite) srunner_add_suite(sr, cuda_lesson2_suite());
    if (cuda_lesson4_suite) srunner_add_suite(sr, cuda_lesson4_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
