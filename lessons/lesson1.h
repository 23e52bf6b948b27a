/* lesson1.h - lesson 1's tensors and problem: what its definition (lesson1.c), its tests and its CUDA tests
 * share. Naming rule, every lesson: the problem a run sees is <name>_problem (the dimensions d, then the
 * lesson's options); lessonN.c reads it through prob_of() and dims_of(). */
#ifndef LESSONS_LESSON1_H
#define LESSONS_LESSON1_H

#include "../kernels/bmm_problem.h"
#include "lesson.h"

/* lesson1_def.tensors, in this order */
enum { X, W, DOUT, OUT, DX, DW };

typedef struct {
    bmm_dims d;
} bmm_problem;

extern const lesson lesson1_def;

#endif
