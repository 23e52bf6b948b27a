/* gradcheck.h - numerical gradient checking by central differences, in double.
 *
 * For each checked parameter element p_i:
 *     numeric_i = (L(p + h e_i) - L(p - h e_i)) / (p_i+ - p_i-)
 * where L is the scalar loss the caller evaluates (in double) and p_i+ / p_i- are the values actually stored
 * after the perturbation. Dividing by the stored difference rather than 2h makes the check exact for float32
 * parameters too: rounding p_i + h to float changes the step, not the quotient's meaning.
 *
 * The caller's loss function runs the implementation's forward pass on the current parameter values and
 * returns sum(out * dout) accumulated in double; the analytic gradient comes from the implementation's
 * backward pass. Element i passes when |analytic_i - numeric_i| <= atol + rtol * |numeric_i|.
 */
#ifndef KERNELS_GRADCHECK_H
#define KERNELS_GRADCHECK_H

#include <stddef.h>
#include "../kernels/runtime/dtype.h"

typedef double (*gradcheck_loss_fn)(void *ctx);

typedef struct {
    size_t checked, failed;
    size_t first_failed;   /* index of the first element off (valid when failed > 0) */
    size_t worst;          /* index of the largest |analytic - numeric| */
    double worst_analytic, worst_numeric;
    double max_abs_err;
} gradcheck_result;

/* param: n elements of type tp, perturbed in place and restored bit for bit. analytic: n elements of type ta.
 * stride: check every stride-th element (1 = all). */
gradcheck_result gradcheck(gradcheck_loss_fn loss, void *ctx, void *param, dtype tp, const void *analytic,
                           dtype ta, size_t n, size_t stride, double h, double atol, double rtol);

/* The failing check's message, naming the elements: "db: 15 of 24 elements off (the first at index 3); worst at
 * index 7: analytic (backward) 0.25, numeric (central difference) 0.5". Indices are flat (row-major) into the
 * parameter. Returns buf. */
const char *gradcheck_message(const gradcheck_result *r, const char *name, char *buf, size_t len);

#endif
