/* npy.h - NumPy .npy files (format version 1.0), so any tensor of a run can be opened with np.load().
 *
 * --dump DIR writes input.<name>.npy for every input and <impl>.<name>.npy for every output and gradient
 * (lessons/runner/lesson_output.h: bf16 widened to float32, int32 to int64; each through
 * lessons/runner/output_file.h, whole or absent). A dtype's descr is dtype.h's. */
#ifndef LESSONS_NPY_H
#define LESSONS_NPY_H

#include <stddef.h>
#include <stdio.h>
#include "../../kernels/runtime/dtype.h"

/* The file's bytes to f; 0, or -1 with errno set when a write failed (the caller's fclose checks the
 * rest). */
int npy_write_stream(FILE *f, const void *data, dtype t, int ndim, const size_t *shape);

/* The same to a file of its own; 0 on success, -1 with errno set on failure (the caller names the file and
 * the program). A write that only fails when the file is closed (a full disk) fails here too. */
int npy_write(const char *path, const void *data, dtype t, int ndim, const size_t *shape);

#endif
