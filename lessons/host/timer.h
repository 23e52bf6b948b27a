/* timer.h - wall-clock time on the host (CLOCK_MONOTONIC). The lesson session times device implementations
 * with it too, between two device synchronisations, minus the time spent inside the allocators (track.h). */
#ifndef KERNELS_TIMER_H
#define KERNELS_TIMER_H

#ifdef __cplusplus
extern "C" {
#endif

double host_time_ms(void); /* milliseconds since an arbitrary fixed point */

#ifdef __cplusplus
}
#endif

#endif
