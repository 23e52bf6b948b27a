/* device_hooks.c - a build on a GPU (or with none): no dry run, nothing emulated, no hook does anything
 * (device_hooks.h). */
#include "device_hooks.h"

int lesson_dry(void) { return 0; }
int device_emulated(void) { return 0; }
void device_timed_pass(int begin) { (void)begin; }
void device_after_run(const lesson *L, const void *prob, int impl, void *const *t)
{
    (void)L, (void)prob, (void)impl, (void)t;
}
void device_report(FILE *out) { (void)out; }
