/* dtype.c - sizes, names and element access for the runtime's buffer types. */
#include "dtype.h"
#include "bf16.h"
#include <stdint.h>

size_t dtype_size(dtype t)
{
    switch (t) {
    case DT_F32: return 4;
    case DT_F64: return 8;
    case DT_BF16: return 2;
    case DT_I32: return 4;
    case DT_I64: return 8;
    }
    return 0;
}

const char *dtype_name(dtype t)
{
    static const char *names[] = {"f32", "f64", "bf16", "i32", "i64"};
    return names[t];
}

const char *dtype_npy_descr(dtype t)
{
    static const char *descr[] = {"<f4", "<f8", "<u2", "<i4", "<i8"};
    return descr[t];
}

double dtype_load(const void *buf, dtype t, size_t i)
{
    switch (t) {
    case DT_F32: return ((const float *)buf)[i];
    case DT_F64: return ((const double *)buf)[i];
    case DT_BF16: return bf16_to_f32(((const bf16 *)buf)[i]);
    case DT_I32: return ((const int32_t *)buf)[i];
    case DT_I64: return (double)((const int64_t *)buf)[i];
    }
    return 0.0;
}

void dtype_store(void *buf, dtype t, size_t i, double v)
{
    switch (t) {
    case DT_F32: ((float *)buf)[i] = (float)v; break;
    case DT_F64: ((double *)buf)[i] = v; break;
    case DT_BF16: ((bf16 *)buf)[i] = bf16_from_f32((float)v); break;
    case DT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case DT_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    }
}
