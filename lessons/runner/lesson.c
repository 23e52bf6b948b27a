/* lesson.c - what a lesson's definition says, read: table sizes, tensor sizes, implementations by name, the
 * tolerance. No state and nothing run: the session, the output and the CLI all ask here. */
#include "lesson.h"

#include "../../kernels/runtime/size_math.h"

#include <stddef.h>
#include <string.h>

/* Rows of a table up to its first empty one: the row whose name (a const char * at name_at) is NULL. */
static int count_rows(const void *rows, size_t row_size, size_t name_at, int max)
{
    int n = 0;
    while (n < max && *(const char *const *)((const char *)rows + (size_t)n * row_size + name_at)) n++;
    return n;
}

int lesson_ndims(const lesson *L)
{
    return count_rows(L->dim_names, sizeof(const char *), 0, LESSON_MAX_DIMS);
}
int lesson_nsizes(const lesson *L)
{
    return count_rows(L->sizes, sizeof(lesson_size), offsetof(lesson_size, name), LESSON_MAX_SIZES);
}
int lesson_nopts(const lesson *L)
{
    return count_rows(L->opts, sizeof(lesson_option), offsetof(lesson_option, flag), LESSON_MAX_OPTS);
}
int lesson_ntensors(const lesson *L)
{
    return count_rows(L->tensors, sizeof(lesson_tensor), offsetof(lesson_tensor, name), LESSON_MAX_TENSORS);
}
int lesson_nimpls(const lesson *L)
{
    return count_rows(L->impls, sizeof(lesson_impl), offsetof(lesson_impl, name), LESSON_MAX_IMPLS);
}

int lesson_is_input(lesson_role r) { return r == LT_INPUT || r == LT_UPSTREAM; }

size_t lesson_tensor_count(const lesson *L, int i, const void *prob)
{
    size_t shape[LESSON_MAX_RANK], n = 1;
    int rank = L->tensors[i].shape(prob, shape);
    for (int k = 0; k < rank; k++) n = size_mul(n, shape[k]);
    return n;
}

size_t lesson_tensor_bytes(const lesson *L, int i, const void *prob)
{
    return size_mul(lesson_tensor_count(L, i, prob), dtype_size(L->tensors[i].type));
}

double lesson_tolerance(const lesson *L, const void *prob)
{
    return L->tolerance_of ? L->tolerance_of(prob) : L->tolerance;
}

int lesson_cuda_version_impl(const lesson *L, int v)
{
    for (int i = 0; v > 0 && i < lesson_nimpls(L); i++)
        if (L->impls[i].device && L->impls[i].version == v) return i;
    return -1;
}

int lesson_cuda_alias_impl(const lesson *L)
{
    return lesson_cuda_version_impl(L, L->cuda_order[0]);
}

int lesson_cuda_pick(const lesson *L, const void *prob, size_t mem_limit, int *skipped)
{
    int first = lesson_cuda_alias_impl(L);
    if (skipped) *skipped = 0;
    for (int k = 0; k < LESSON_MAX_IMPLS && L->cuda_order[k]; k++) {
        int i = lesson_cuda_version_impl(L, L->cuda_order[k]);
        if (i < 0 || L->impls[i].memory(prob).peak > mem_limit) continue;
        if (!(L->impls[i].unfit && L->impls[i].unfit(prob))) {
            if (skipped) *skipped = k;
            return i;
        }
    }
    return first;
}

int lesson_find_impl(const lesson *L, const char *name)
{
    if (strcmp(name, LESSON_CUDA_ALIAS) == 0) return lesson_cuda_alias_impl(L);
    for (int i = 0; i < lesson_nimpls(L); i++)
        if (strcmp(L->impls[i].name, name) == 0) return i;
    return -1;
}

int lesson_size_formula(const lesson *L, const char *size, const char *impl, mem_formula *out)
{
    int i = lesson_find_impl(L, impl);
    long long opts[LESSON_MAX_OPTS];
    lesson_problem prob;
    for (int k = 0; k < lesson_nopts(L); k++) opts[k] = L->opts[k].def;
    for (int s = 0; s < lesson_nsizes(L) && i >= 0; s++) {
        if (strcmp(L->sizes[s].name, size) != 0 || L->make_problem(L->sizes[s].dims, opts, &prob)) continue;
        *out = L->impls[i].memory(&prob);
        return 0;
    }
    return -1;
}
