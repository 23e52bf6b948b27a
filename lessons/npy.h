/* npy.h - NumPy .npy files (format version 1.0), so any tensor of a run can be opened with np.load().
 *
 * --dump DIR writes input.<name>.npy for every input and <impl>.<name>.npy for every output and gradient
 * (lessons/lesson_output.h: bf16 widened to float32, int32 to int64). A dtype's descr is dtype.h's. */
#ifndef LESSONS_NPY_H
#define LESSONS_NPY_H

#include <stddef.h>
#include "../kernels/runtime/dtype.h"

/* Returns 0 on success, -1 with errno set on failure (the caller names the file and the program). A write that
 * only fails when the file is closed (a full disk) fails here too. */
int npy_write(const char *path, const void *data, dtype t, int ndim, const size_t *shape);

/* mkdir -p dir; 0 on success, -1 with errno set otherwise (ENOTDIR: dir exists and is not a directory). */
int npy_make_dir(const char *dir);

/* Writes dir/<prefix>.<name>.npy. */
int npy_dump(const char *dir, const char *prefix, const char *name, const void *data, dtype t, int ndim,
             const size_t *shape);

#endif
