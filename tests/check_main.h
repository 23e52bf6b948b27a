/* check_main.h - the main() every Check suite binary shares: run the suite, exit non-zero when a test failed. */
#ifndef TESTS_CHECK_MAIN_H
#define TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int check_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY=silent|minimal|normal|verbose; normal when unset */
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
