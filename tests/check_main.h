/* check_main.h - the main() every Check suite binary shares: run the suite, exit non-zero when a test failed.
 *
 * CK_RUN_SUITE and CK_RUN_CASE (Check's own selection) that match nothing would run 0 checks and pass; a guessed
 * name ("cuda_lesson4" for "cuda-lesson4") must say so and fail instead: check_run_selected. */
#ifndef TESTS_CHECK_MAIN_H
#define TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs sr as CK_ENV says; returns EXIT_FAILURE when a test failed or when CK_RUN_SUITE / CK_RUN_CASE selected
 * no test at all (with one line naming what was asked). Frees sr. */
static inline int check_run_selected(SRunner *sr, const char *program)
{
    srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY=silent|minimal|normal|verbose; normal when unset */
    int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
    srunner_free(sr);
    const char *suite = getenv("CK_RUN_SUITE"), *tcase = getenv("CK_RUN_CASE");
    if (ran == 0 && ((suite && *suite) || (tcase && *tcase))) {
        fprintf(stderr, "%s: CK_RUN_SUITE=%s CK_RUN_CASE=%s names no suite or test case here, so no test ran "
                        "(unset both and run with CK_VERBOSITY=verbose to see every suite and case)\n", program,
                suite ? suite : "(unset)", tcase ? tcase : "(unset)");
        return EXIT_FAILURE;
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* The suite file names the binary in the message (tests/test_lesson4.c). */
#define check_main(s) check_run_selected(srunner_create(s), __FILE__)

#endif
