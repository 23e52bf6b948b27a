/* test_cuda.c - the GPU test runner. Runs every lesson's CUDA suite when a device exists, without fork (CUDA
 * state does not survive fork), and skips with one clear line when there is none. Built only with CUDA. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kernels/runtime/cuda_track.h"

#include "check_main.h"
#include "cuda_suites.h"

int main(void)
{
    const char *why = "unknown";
    if (cuda_device_count(&why) == 0) {
        printf("test_cuda: skipped: no CUDA device (%s); the CUDA code was compiled and linked but not run\n", why);
        return EXIT_SUCCESS;
    }
    printf("test_cuda: running on %s\n", cuda_device_name());
#define X(n) cuda_lesson##n##_suite,
    Suite *(*suites[])(void) = {
#include "lesson_list.h"
    };
#undef X
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (suites[i]) srunner_add_suite(sr, suites[i]());
    srunner_set_fork_status(sr, CK_NOFORK);
    return check_run_selected(sr, "test_cuda"); /* CK_VERBOSITY=verbose names every test */
}
