/* logchain_memory_walk.h - lesson 2's test oracle for naive's memory: the tree replayed level by level.
 *
 * naive_lc_memory (naive/logchain_tree.c) is a closed form. This walk reaches the same two numbers the long way:
 * it adds each tensor's bytes where the dataflow of naive/logchain_tree.h creates it, removes them where it
 * dies, and keeps the maximum, level by level over the ragged tree (39 -> 20 -> 10 -> 5 -> 3 -> 2 -> 1). It is
 * written from the dataflow, not from the code, so test_lesson2.c can assert closed form == walk at sizes the
 * tracker cannot reach (and the tracker checks both at the sizes it can).
 */
#ifndef TESTS_LOGCHAIN_MEMORY_WALK_H
#define TESTS_LOGCHAIN_MEMORY_WALK_H

#include "../kernels/logchain_problem.h"

/* Exact bytes, inputs and dout included, for the carrying tree (LC_ODD_CARRY); SIZE_MAX when they overflow. */
lc_memory naive_lc_memory_walk(const lc_dims *d);

#endif
