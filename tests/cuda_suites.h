/* cuda_suites.h - every lesson's GPU suite (tests/cuda_lessonN.c), run by test_cuda without fork. Weak: a
 * lesson's suite joins test_cuda by being linked (the Makefile links tests/cuda_lessonN.c when it exists). */
#ifndef TESTS_CUDA_SUITES_H
#define TESTS_CUDA_SUITES_H

#include <check.h>

Suite *cuda_lesson1_suite(void) __attribute__((weak));
Suite *cuda_lesson2_suite(void) __attribute__((weak));
Suite *cuda_lesson3_suite(void) __attribute__((weak));
Suite *cuda_lesson4_suite(void) __attribute__((weak));
Suite *cuda_lesson5_suite(void) __attribute__((weak));

#endif
