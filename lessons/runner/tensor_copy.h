/* tensor_copy.h - a session's own copy of an input: a tracked allocation with the caller's label, filled from
 * the driver's master buffer. Host and device versions, so every lesson's sessions read alike. */
#ifndef LESSONS_TENSOR_COPY_H
#define LESSONS_TENSOR_COPY_H

#include <stddef.h>
#include "../../kernels/runtime/dtype.h"

void *host_copy(const void *src, size_t count, dtype t, const char *label);
#ifdef HAVE_CUDA
void *dev_copy(const void *src_host, size_t count, dtype t, const char *label);
#endif

#endif
