/* linear_ce_reference.h - lesson 5's float64 reference: the loss and both gradients in double from the bf16
 * inputs (each bf16 value is exact in double), no chunking, no rounding of any intermediate. */
#ifndef LESSONS_LINEAR_CE_REFERENCE_H
#define LESSONS_LINEAR_CE_REFERENCE_H

#include <stdint.h>
#include "../kernels/linear_ce.h"

/* loss (1,), dx (N, H), dW (V, H): caller-owned doubles. x (N, H), W (V, H) bf16; target (N,); dloss scalar.
 * Per block of rows, three cblas_dgemm calls (logits, dx, dW +=) around a plain double loop per row
 * (logsumexp, softmax - onehot). Scratch is tracked ("reference: ..."): W in double (V*H*8 bytes) and one
 * block's x rows and logits, the logits at most LCE_REF_LOGIT_BYTES. */
#define LCE_REF_LOGIT_BYTES ((size_t)32 << 20)
void lce_reference(const lce_dims *d, const bf16 *x, const bf16 *W, const int32_t *target, double dloss,
                   double *loss, double *dx, double *dW);

/* The loss alone, in double, from double copies of x and W (for the finite-difference checks). */
double lce_reference_loss_f64(const lce_dims *d, const double *x, const double *W, const int32_t *target);

/* The lesson's inputs from seed: x ~ N(0, 1) and W ~ N(0, 4/H) rounded to bf16 (logits of standard deviation
 * about 2, a trained lm_head's spread rather than a uniform softmax); target uniform in [0, V) with about one
 * row in 16 set to LCE_IGNORE, at least one when N >= 2 (row 1), never all; dloss uniform in [0.5, 1.5), not
 * 1, so a missing or doubled scaling shows. */
void lce_fill(const lce_dims *d, uint64_t seed, bf16 *x, bf16 *W, int32_t *target, float *dloss);

#endif
