/* impl_gate.h - the decision every lesson driver makes before running an implementation: is there a device
 * for it, and does its predicted peak fit under --mem-limit? When the answer is no, the row gets a note that
 * the table prints as "skipped: ..." and nothing is allocated. */
#ifndef LESSONS_IMPL_GATE_H
#define LESSONS_IMPL_GATE_H

#include <stddef.h>
#include "report.h"

typedef enum { GATE_RUN, GATE_NO_DEVICE, GATE_OVER_MEM_LIMIT } impl_gate_verdict;

/* GATE_RUN if the implementation may run. needs_cuda: it is a CUDA implementation (then the build must have
 * CUDA and a device must exist; otherwise GATE_NO_DEVICE, the note says why and the rest of the lesson runs:
 * the driver says so once on stderr for all the CUDA versions, not once each). */
impl_gate_verdict impl_gate(impl_row *row, int needs_cuda, size_t predicted_peak, size_t mem_limit);

#endif
