/* timer.h - wall-clock time on the host (CLOCK_MONOTONIC). GPU code times with CUDA events instead
 * (cuda_track.h), because a kernel launch returns before the kernel finishes. */
#ifndef KERNELS_TIMER_H
#define KERNELS_TIMER_H

double host_time_ms(void); /* milliseconds since an arbitrary fixed point */

#endif
