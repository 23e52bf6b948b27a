/* lesson_testing.h - a lesson's own tests run its implementations through the same session the lesson
 * binary uses (lessons/runner/session.c), so what a test asserts is what the table prints. */
#ifndef TESTS_LESSON_TESTING_H
#define TESTS_LESSON_TESTING_H

#include "lesson.h"

/* Runs implementation `impl` (its CLI name) of L on host inputs t (indexed like L's tensors; only LT_INPUT and
 * LT_UPSTREAM are read), copies each output and gradient into out[i] where out[i] is not NULL, and returns
 * the measured row. Asserts (Check) that the implementation exists and that the session freed what it made. */
impl_row lesson_test_run(const lesson *L, const void *prob, const char *impl, void *const *t, void *const *out);

#endif
