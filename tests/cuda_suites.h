/* cuda_suites.h - every lesson's GPU suite (tests/cuda_lessonN.c), run by test_cuda without fork, one per lesson
 * of the Makefile's list (the generated lesson_list.h: X(1) X(2) ...). Weak: a lesson without a
 * tests/cuda_lessonN.c has no suite, and the Makefile links tests/cuda_lessonN.c only when it exists. */
#ifndef TESTS_CUDA_SUITES_H
#define TESTS_CUDA_SUITES_H

#include <check.h>

#define X(n) Suite *cuda_lesson##n##_suite(void) __attribute__((weak));
#include "lesson_list.h"
#undef X

#endif
