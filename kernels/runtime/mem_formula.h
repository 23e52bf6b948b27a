/* mem_formula.h - what an implementation's analytic memory formula predicts, in exact bytes.
 *
 * Every implementation of every lesson has one, written from its dataflow (docs/lesson-N.md derives each).
 * The lesson session prints it beside the tracker's measurement and the tests assert the two are equal.
 * Sizes come from the command line, so formulas multiply through size_mul/size_add (size_math.h), which
 * saturate at SIZE_MAX instead of wrapping.
 */
#ifndef KERNELS_MEM_FORMULA_H
#define KERNELS_MEM_FORMULA_H

#include <stddef.h>
#include "size_math.h"

typedef struct {
    /* highest live bytes over forward + backward, inputs and upstream gradient included */
    size_t peak;
    size_t forward_live; /* live right after forward: inputs, outputs, what is saved for backward */
    size_t allocs;       /* tracked allocations in the run; 0 = the formula does not predict the count */
} mem_formula;

#endif
