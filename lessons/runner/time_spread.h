/* time_spread.h - the times' spread under the table: on which machine, the median of how many runs, and the
 * fastest and slowest of them, so a doc that pastes the output shows every millisecond figure with its
 * spread. */
#ifndef LESSONS_TIME_SPREAD_H
#define LESSONS_TIME_SPREAD_H

#include "cli.h"
#include "report.h"

#include <stdio.h>

/* The CPU's model name (/proc/cpuinfo) and core count, "an unnamed CPU" where the system does not say. */
const char *machine_name(void);
/* fwd_ms[k] / bwd_ms[k]: row k's `repeat` timed runs (one run: that run). Device rows are named by their GPU.
 * Printed after the verdict, a blank line first; nothing where no row was timed. */
void report_time_spread(FILE *f, const impl_row *rows, int n, const double (*fwd_ms)[CLI_MAX_REPEAT],
                        const double (*bwd_ms)[CLI_MAX_REPEAT], int repeat);

#endif
