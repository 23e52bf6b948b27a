/* lesson2.h - lesson 2's tensors and problem: what its definition (lesson2.c), its tests and its CUDA tests
 * share (the naming rule: lesson1.h). */
#ifndef LESSONS_LESSON2_H
#define LESSONS_LESSON2_H

#include "../kernels/logchain_problem.h"
#include "lesson.h"

/* lesson2_def.tensors, in this order */
enum { X, BULK, P0, DOUT, OUT, DX, DBULK, DP0 };

typedef struct {
    lc_dims d;
} lc_problem;

extern const lesson lesson2_def;

#endif
