/* bmm_testing.h - lesson 1's typed view of the generic session, for its tests (test_lesson1.c, cuda_lesson1.c). */
#ifndef TESTS_BMM_TESTING_H
#define TESTS_BMM_TESTING_H

#include "../kernels/bmm_problem.h"
#include "lesson_testing.h"

extern const lesson lesson1_def;

typedef enum { BMM_NAIVE = 0, BMM_CPU = 1, BMM_CUDA = 2 } bmm_impl; /* lesson1_def.impls order */

typedef struct {
    const float *x;    /* (B, G*K) */
    const float *W;    /* (G, K, N) */
    const float *dout; /* (B, G, N) */
} bmm_inputs;

typedef struct {
    float *out; /* (B, G, N) */
    float *dx;  /* (B, G*K) */
    float *dW;  /* (G, K, N) */
} bmm_outputs;

static inline const char *bmm_impl_name(bmm_impl impl) { return lesson1_def.impls[impl].name; }

static inline mem_formula bmm_predict(bmm_impl impl, const bmm_dims *d) { return lesson1_def.impls[impl].memory(d); }

/* Runs impl through the lesson session on the caller's inputs; results into res (every element written). */
static inline impl_row bmm_run(bmm_impl impl, const bmm_dims *d, const bmm_inputs *in, bmm_outputs *res)
{
    void *t[LESSON_MAX_TENSORS] = {(void *)in->x, (void *)in->W, (void *)in->dout};
    void *o[LESSON_MAX_TENSORS] = {NULL, NULL, NULL, res->out, res->dx, res->dW};
    return lesson_test_run(&lesson1_def, d, bmm_impl_name(impl), t, o);
}

#endif
