/* lesson5.h - lesson 5's tensors, option and problem: what its definition (lesson5.c), its tests and its CUDA
 * tests share (the naming rule: lesson1.h). */
#ifndef LESSONS_LESSON5_H
#define LESSONS_LESSON5_H

#include "../kernels/linear_ce.h"
#include "lesson.h"

/* lesson5_def.tensors and .opts, in this order */
enum { X, W, TARGET, DLOSS, LOSS, DX, DW };
enum { OPT_CHUNK, OPT_FILTER, OPT_PEAKED };

typedef struct {
    lce_dims d; /* d.chunk is --chunk, resolved */
    int filter; /* --filter: cuda-v3 and cuda-v4 apply Cut Cross-Entropy's gradient filter */
    int peaked; /* --peaked: the inputs of a model that predicts its data (fill) */
} lce_problem;

extern const lesson lesson5_def;

#endif
