/* toy_lesson.c - a sixth lesson, for the done-when check of the lesson list only (make test-toy-lesson): y = 3x.
 * Built into build/toy/lesson6 by the one LESSON line the Makefile reads under TOY_LESSON=1, it must join the
 * table-driven suite (tests/test_lessons.c), the CLI tests and the bench plan with no list edited. Two host
 * implementations whose memory formulas are exact, like every real lesson's. */
#include "track.h"
#include "lesson.h"

#include <string.h>

enum { X, DOUT, OUT, DX };

static size_t n_of(const void *prob) { return *(const size_t *)prob; }
static int shape_n(const void *prob, size_t *s) { s[0] = n_of(prob); return 1; }

static const char *make_problem(const long long *dims, const long long *opts, void *prob)
{
    (void)opts;
    size_t n = (size_t)dims[0];
    memcpy(prob, &n, sizeof n);
    return NULL;
}

static void fill(const void *prob, uint64_t seed, void *const *t)
{
    for (size_t i = 0; i < n_of(prob); i++) {
        ((float *)t[X])[i] = 1.0f + (float)((seed + i) % 5);
        ((float *)t[DOUT])[i] = 0.25f * (float)(i + 1);
    }
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    for (size_t i = 0; i < n_of(prob); i++) {
        ref[OUT][i] = 3.0 * ((const float *)t[X])[i];
        ref[DX][i] = 3.0 * ((const float *)t[DOUT])[i];
    }
}

/* x, out | dout, dx: four n-float buffers, out made by forward and dx by backward */
static mem_formula memory(const void *prob)
{
    size_t b = 4 * n_of(prob);
    mem_formula m = {4 * b, 2 * b, 4};
    return m;
}

static float *times3(const lesson_run *r, int in, const char *label)
{
    size_t n = n_of(r->prob);
    float *y = host_alloc_array(n, DT_F32, label);
    for (size_t i = 0; i < n; i++) y[i] = 3.0f * ((const float *)r->t[in])[i];
    return y;
}
static void forward(lesson_run *r) { r->t[OUT] = times3(r, X, "toy out (n)"); }
static void backward(lesson_run *r) { r->t[DX] = times3(r, DOUT, "toy dx (n)"); }
/* one multiply per element each way: the share of the GEMM rate every lesson's table and CSV report */
static double work(const void *prob) { return 2.0 * (double)*(const size_t *)prob; }

const lesson lesson6_def = {
    .number = 6,
    .program = "lesson6",
    .title = "Lesson 6 (a toy for the tests): y = 3x",
    .summary = "a toy lesson that shows a lesson joins by its definition and one Makefile line",
    .dim_names = {"n"},
    .sizes = {{.name = "tiny", .dims = {5}}, {.name = "small", .dims = {1000}}},
    .default_size = "tiny",
    .make_problem = make_problem,
    .tensors = {[X] = {.name = "x", .role = LT_INPUT, .type = DT_F32, .label = "x (n) input", .shape = shape_n},
                [DOUT] = {.name = "dout", .role = LT_UPSTREAM, .type = DT_F32, .label = "dout (n) upstream gradient",
                          .shape = shape_n},
                [OUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_n},
                [DX] = {.name = "dx", .role = LT_GRAD, .type = DT_F32, .shape = shape_n, .grad_of = X}},
    .fill = fill,
    .reference = reference,
    .tolerance = 1e-6,
    .tolerance_why = "3x of small integers and quarters is exact in float32",
    .impls = {{.name = "naive", .about = "y = 3x", .memory = memory, .forward = forward, .backward = backward,
               .work = work},
              {.name = "cpu", .about = "y = 3x again", .memory = memory, .forward = forward, .backward = backward,
               .work = work}},
};
