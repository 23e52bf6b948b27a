/* device_hooks.h - what the session tells a build that runs the CUDA versions some other way than on a GPU
 * (the tests' CPU emulation links its own definitions in place of device_hooks.c), and what it hears back.
 * This build runs them on a GPU: nothing is emulated, nothing runs dry, the hooks do nothing. */
#ifndef LESSONS_DEVICE_HOOKS_H
#define LESSONS_DEVICE_HOOKS_H

#include <stdio.h>

#include "lesson.h"

/* 1 where device runs are emulated on the CPU: their times mean nothing. */
int device_emulated(void);
/* The session brackets the pass the table times (a device run's last: the first pays for set-up) with
 * device_timed_pass(1) and (0). */
void device_timed_pass(int begin);
/* After a device implementation's validated run of prob: a build may run it once more for its own ends (its
 * results discarded). */
void device_after_run(const lesson *L, const void *prob, int impl, void *const *t);
/* Under the table: what such a build has to say of those runs. */
void device_report(FILE *out);

#endif
