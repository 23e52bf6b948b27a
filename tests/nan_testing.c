#include "nan_testing.h"

#include <math.h>
#include <stdio.h>

#include "track.h"
#include "lesson_testing.h"

static const char *expect_name[] = {"finite", "NaN", "an infinity", "NaN or an infinity", "0"};

static int holds(nan_expect x, double v)
{
    switch (x) {
    case NT_FINITE: return isfinite(v);
    case NT_NAN: return isnan(v);
    case NT_INF: return isinf(v);
    case NT_NONFINITE: return !isfinite(v);
    case NT_ZERO: return v == 0.0;
    }
    return 0;
}

static size_t count_broken(const nan_case *c, int k, const void *buf)
{
    size_t n = lesson_tensor_count(c->L, k, c->prob), bad = 0;
    for (size_t e = 0; e < n; e++) {
        nan_expect x = c->rule(c->prob, k, e);
        double v = dtype_load(buf, c->L->tensors[k].type, e);
        if (holds(x, v)) continue;
        if (bad++ < 8)
            fprintf(stderr, "%s %s, %s[%zu] = %g planted at %s[%zu]: %s[%zu] is %g, expected %s\n", c->L->program,
                    c->impl, c->L->tensors[c->input].name, c->at, c->value, c->L->tensors[c->input].name, c->at,
                    c->L->tensors[k].name, e, v, expect_name[x]);
    }
    return bad;
}

size_t nan_check(const nan_case *c)
{
    void *t[LESSON_MAX_TENSORS], *out[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(c->L, c->prob, 77, t);
    dtype_store(t[c->input], c->L->tensors[c->input].type, c->at, c->value);
    for (int k = 0; k < lesson_ntensors(c->L); k++) {
        lesson_role r = c->L->tensors[k].role;
        if (r == LT_OUTPUT || r == LT_GRAD)
            out[k] = host_alloc_array(lesson_tensor_count(c->L, k, c->prob), c->L->tensors[k].type, "test: result");
    }
    (void)lesson_test_run(c->L, c->prob, c->impl, t, out);
    size_t bad = 0;
    for (int k = 0; k < lesson_ntensors(c->L); k++)
        if (out[k]) bad += count_broken(c, k, out[k]);
    for (int k = 0; k < lesson_ntensors(c->L); k++) host_free(out[k]);
    lesson_free_slots(c->L, t);
    return bad;
}
