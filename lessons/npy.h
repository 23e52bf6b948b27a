/* npy.h - NumPy .npy files (format version 1.0), so any tensor of a run can be opened with np.load().
 *
 * --dump DIR writes input.<name>.npy for every input and <impl>.<name>.npy for every output and gradient.
 * bf16 buffers are written as '<u2' raw bits (see dtype.h). */
#ifndef LESSONS_NPY_H
#define LESSONS_NPY_H

#include <stddef.h>
#include "../kernels/runtime/dtype.h"

/* Returns 0 on success; on failure prints why (path and errno text) and returns -1. */
int npy_write(const char *path, const void *data, dtype t, int ndim, const size_t *shape);

/* mkdir -p dir; 0 on success, -1 with a message otherwise. */
int npy_make_dir(const char *dir);

/* Writes dir/<prefix>.<name>.npy. */
int npy_dump(const char *dir, const char *prefix, const char *name, const void *data, dtype t, int ndim,
             const size_t *shape);

#endif
