/* lesson_defs.h - small helpers that lesson definitions (lessonN.c) share: shape functions and finding an
 * implementation's result in the report an epilogue receives. */
#ifndef LESSONS_LESSON_DEFS_H
#define LESSONS_LESSON_DEFS_H

#include <string.h>

#include "lesson.h"

static inline int lesson_shape1(size_t *s, size_t a) { s[0] = a; return 1; }
static inline int lesson_shape2(size_t *s, size_t a, size_t b) { s[0] = a; s[1] = b; return 2; }
static inline int lesson_shape3(size_t *s, size_t a, size_t b, size_t c)
{
    s[0] = a; s[1] = b; s[2] = c;
    return 3;
}
static inline int lesson_shape4(size_t *s, size_t a, size_t b, size_t c, size_t d)
{
    s[0] = a; s[1] = b; s[2] = c; s[3] = d;
    return 4;
}
static inline int lesson_shape5(size_t *s, size_t a, size_t b, size_t c, size_t d, size_t e)
{
    s[0] = a; s[1] = b; s[2] = c; s[3] = d; s[4] = e;
    return 5;
}

/* The result of the implementation called name if it ran, else NULL. */
static inline const lesson_result *lesson_report_find(const lesson_report *r, const char *name)
{
    for (int k = 0; k < r->n; k++)
        if (r->res[k].row.ran && strcmp(r->res[k].row.impl, name) == 0) return &r->res[k];
    return NULL;
}

#endif
