/* gru_reference.h - lesson 4's float64 reference: the same cell and its backward through time, written
 * directly, everything in double: each step's products over the batch by cblas_dgemm, the gates in plain
 * double loops (no float32 code, no fusion). Inputs are the float32 tensors; outputs
 * are double arrays of the same shapes. Also a float64 loss for the finite-difference gradient checks. */
#ifndef LESSONS_GRU_REFERENCE_H
#define LESSONS_GRU_REFERENCE_H

#include "../kernels/gru_problem.h"

typedef struct {
    const float *x, *h0, *eps, *W_enc, *W_ih, *W_zh, *dout; /* shapes in gru_problem.h */
} gru_inputs;

typedef struct {
    double *out, *dx, *dh0, *dW_enc, *dW_ih, *dW_zh; /* any may be NULL except out */
} gru_ref_outputs;

/* Forward always; backward when dx is non-NULL (then all gradients must be given). */
void gru_reference(const gru_dims *d, const gru_inputs *in, gru_ref_outputs *o);

/* sum(out * dout) in double (forward only) */
double gru_reference_loss(const gru_dims *d, const gru_inputs *in);

#endif
