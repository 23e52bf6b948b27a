/* logchain_bruteforce.h - lesson 2's ground truth at tiny sizes: the sum over all c^v state paths, in double.
 *
 * out = log sum_paths p0[j_0] exp(x_0[j_0]) P_0[j_0, j_1] exp(x_1[j_1]) ... exp(x_{v-1}[j_{v-1}]).
 * Enumeration also gives the exact gradients: a path's posterior weight w / Z is the probability of that path,
 *   dx_i[j]       = dout * sum of posteriors of the paths with j_i = j
 *   dbulk_i[j, k] = sum_b dout_b * (sum of posteriors with j_i = j, j_{i+1} = k) / P_i[j, k]
 *   dp0[j]        = sum_b dout_b * (sum of posteriors with j_0 = j) / p0[j]
 * No recursion, no max shift, no shared code with the implementations. Test-only: c^v must be at most 2^24.
 */
#ifndef TESTS_LOGCHAIN_BRUTEFORCE_H
#define TESTS_LOGCHAIN_BRUTEFORCE_H

#include "../lessons/logchain_reference.h"

/* Allocates res's buffers (free with lc_reference_free) and fills them. dout (n,t). */
void lc_bruteforce(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *dout,
                   lc_ref_result *res);

#endif
