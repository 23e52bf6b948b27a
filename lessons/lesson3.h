/* lesson3.h - lesson 3's tensors, options and problem: what its definition (lesson3.c), its tests and its
 * CUDA tests share (the naming rule: lesson1.h). */
#ifndef LESSONS_LESSON3_H
#define LESSONS_LESSON3_H

#include "../kernels/maxsim.h"
#include "lesson.h"

/* lesson3_def.tensors and .opts, in this order */
enum { A, B, DOUT, OUT, DA, DB };
enum { OPT_RECOMPUTE, OPT_DETERMINISTIC, OPT_PRECISION };

/* --precision's names: cuda-v5's 16-bit operand type */
enum { MS_BF16, MS_FP16 };

/* The problem a run sees: the dimensions and the options. */
typedef struct {
    ms_dims d;
    int recompute, deterministic, precision;
} ms_problem;

extern const lesson lesson3_def;

#endif
