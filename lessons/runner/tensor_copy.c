#include "tensor_copy.h"

#include "track.h"
#ifdef HAVE_CUDA
#include "../../kernels/runtime/cuda_track.h"
#endif

#include <string.h>

void *host_copy(const void *src, size_t count, dtype t, const char *label)
{
    void *p = host_alloc_array(count, t, label);
    memcpy(p, src, count * dtype_size(t));
    return p;
}

#ifdef HAVE_CUDA
void *dev_copy(const void *src_host, size_t count, dtype t, const char *label)
{
    void *p = dev_alloc_array(count, t, label);
    dev_upload(p, src_host, count * dtype_size(t));
    return p;
}
#endif
