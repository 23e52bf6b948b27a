/* maxsim_reference.h - lesson 3's float64 reference and its input distribution.
 *
 * The reference computes the same function as every implementation, in double, without the 4-D tensor: for a
 * block of (i, j) rows it computes the scores against every (m, n) with cblas_dgemm (blas_reference.h), scans
 * n in a plain loop, keeps the first maximum (the lowest n, the tie rule of maxsim.h), and adds that one
 * term to out, da and db. Memory: the outputs, double copies of a and b, and one block's scores (at most 32
 * MiB). Time: I*J*M*N*K double multiply-adds in the GEMM.
 *
 * Inputs on a grid. The gradient through max is a step function of the inputs: if float32 rounding moves two
 * nearly equal scores past each other, an implementation and the reference pick different n and their da, db
 * differ by a whole term, not by a rounding error. So a and b are drawn as integers in [-8, 8] divided by 8:
 * every product is a multiple of 1/64 and every score (|score| <= K) is a sum of such multiples below
 * 2^24/64, exact in float32 in any summation order (GEMM tiles, FMA, split K). The float32 implementations
 * and the float64 reference then see identical scores and pick the identical argmax; exact ties do occur on a
 * grid and every implementation breaks them the same way. dout is a plain standard normal: out, da and db
 * then carry ordinary float32 rounding, which the tolerance covers.
 */
#ifndef LESSONS_MAXSIM_REFERENCE_H
#define LESSONS_MAXSIM_REFERENCE_H

#include <stdint.h>
#include "../kernels/maxsim.h"

#define MS_GRID_STEPS 8 /* a, b in {-8, ..., 8} / 8 */

/* a [I, J, K], b [M, N, K] on the grid above; dout [I, M] standard normal. */
void ms_fill_inputs(const ms_dims *d, uint64_t seed, float *a, float *b, float *dout);

/* out [I, M], da [I, J, K], db [M, N, K] in double; dout may be NULL (then da, db are not written). */
void ms_reference(const ms_dims *d, const float *a, const float *b, const float *dout, double *out,
                  double *da, double *db);

#endif
