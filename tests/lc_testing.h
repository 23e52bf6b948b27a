/* lc_testing.h - lesson 2's typed view of the generic session, for its tests (test_lesson2.c, cuda_lesson2.c). */
#ifndef TESTS_LC_TESTING_H
#define TESTS_LC_TESTING_H

#include "../kernels/logchain_problem.h"
#include "lesson_testing.h"

extern const lesson lesson2_def;

typedef enum { LC_NAIVE, LC_CPU, LC_CUDA_V2, LC_CUDA_V1, LC_CUDA_V4, LC_CUDA_V5 } lc_impl; /* each a version by name: "cuda" is an alias that follows measurement */

/* The row of lesson2_def.impls, found by name: the table's order is the lesson's, not the tests'. */
static inline int lc_impl_index(lc_impl impl)
{
    static const char *const names[] = {"naive", "cpu", "cuda-v2", "cuda-v1", "cuda-v4", "cuda-v5"};
    return lesson_find_impl(&lesson2_def, names[impl]);
}

typedef struct {
    const float *x;    /* (n,t,v,c) */
    const float *bulk; /* (1,t,v-1,c,c) */
    const float *p0;   /* (1,t,c) */
    const float *dout; /* (n,t) */
} lc_inputs;

typedef struct {
    float *out;   /* (n,t) */
    float *dx;    /* (n,t,v,c) */
    float *dbulk; /* (1,t,v-1,c,c) */
    float *dp0;   /* (1,t,c) */
} lc_outputs;

static inline const char *lc_impl_name(lc_impl impl) { return lesson2_def.impls[lc_impl_index(impl)].name; }

static inline mem_formula lc_predict(lc_impl impl, const lc_dims *d)
{
    return lesson2_def.impls[lc_impl_index(impl)].memory(d);
}

static inline impl_row lc_run(lc_impl impl, const lc_dims *d, const lc_inputs *in, lc_outputs *res)
{
    void *t[LESSON_MAX_TENSORS] = {(void *)in->x, (void *)in->bulk, (void *)in->p0, (void *)in->dout};
    void *o[LESSON_MAX_TENSORS] = {NULL, NULL, NULL, NULL, res->out, res->dx, res->dbulk, res->dp0};
    return lesson_test_run(&lesson2_def, d, lc_impl_name(impl), t, o);
}

#endif
