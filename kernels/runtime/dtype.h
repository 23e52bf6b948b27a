/* dtype.h - the element types a lesson's buffers can hold.
 *
 * f32/f64 for activations and references, bf16 for lesson 5's low-precision products, i32/i64 for the index
 * buffers of lesson 3 (argmax positions). The .npy writer, the comparisons and the gradient checker read any
 * buffer through dtype_load(), so one routine serves every type.
 */
#ifndef KERNELS_DTYPE_H
#define KERNELS_DTYPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DT_F32, DT_F64, DT_BF16, DT_I32, DT_I64 } dtype;

size_t dtype_size(dtype t);
const char *dtype_name(dtype t);
/* NumPy's descr string for the type. bf16 has no NumPy type: it is written as '<u2' (the raw bits); a reader
 * recovers the floats with (a.astype(np.uint32) << 16).view(np.float32). */
const char *dtype_npy_descr(dtype t);
/* Element i of buf, widened to double (bf16 and integers convert exactly). */
double dtype_load(const void *buf, dtype t, size_t i);
/* Store v into element i, rounding to the type (bf16: round to nearest even; integers: truncation). */
void dtype_store(void *buf, dtype t, size_t i, double v);

#ifdef __cplusplus
}
#endif

#endif
