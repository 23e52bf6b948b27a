/* nan_testing.h - NaN and Inf inputs through any lesson: one value planted in one input, an implementation
 * run through the session (as the lesson binary runs it), and every element of every output and gradient held
 * to the lesson's propagation rule -- the rule PyTorch's formulation of the lesson follows, stated beside each
 * lesson's cases. Run under the emulator and ASan (make test-emu, SANITIZE=1), the same cases also prove that a
 * non-finite input sends no index out of bounds. */
#ifndef TESTS_NAN_TESTING_H
#define TESTS_NAN_TESTING_H

#include "lesson.h"

typedef enum {
    NT_FINITE,     /* a finite number */
    NT_NAN,        /* NaN */
    NT_INF,        /* +Inf or -Inf */
    NT_NONFINITE,  /* NaN or an infinity */
    NT_ZERO,       /* exactly 0 (a gradient that must not turn NaN) */
} nan_expect;

/* What element e of output or gradient tensor k must be, for the planted case. */
typedef nan_expect (*nan_rule)(const void *prob, int k, size_t e);

typedef struct {
    const lesson *L;
    const void *prob;
    const char *impl;   /* CLI name */
    int input;          /* the tensor planted into (an LT_INPUT) */
    size_t at;          /* its element */
    double value;       /* NAN, INFINITY, -INFINITY */
    nan_rule rule;
} nan_case;

/* Runs the case on fresh inputs (seed 77) and returns how many elements break the rule; prints the first few
 * (tensor, element, value, expected) to stderr. */
size_t nan_check(const nan_case *c);

/* The lessons' planted cases (nan_rules.c, where each rule is stated): elements that break the rule. */
size_t nan_lesson1(const char *impl, double value); /* NaN or +Inf in x */
size_t nan_lesson2(const char *impl, double value); /* NaN or -Inf in x */
size_t nan_lesson4(const char *impl);               /* NaN in x */
size_t nan_lesson5(const char *impl);               /* NaN in x */

#endif
