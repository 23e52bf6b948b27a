/* grid_sync_cost.cu - what one grid-wide synchronisation costs on this GPU with no work between: the floor under a
 * persistent kernel that synchronises its grid every step (lesson 4's chains: 2 a step, 4T = 1,024 a pass at
 * medium). A cooperative kernel whose blocks only call grid.sync() n times, at the grids lesson 4 launches (cuda-v4
 * and v5: 128 blocks of 512 threads; cuda-v3: 256 of 256) and at one block of 256 threads per SM; a sync costs
 * (time at n - time at 0) / n, each time the median of 7 launches, on the host clock around cudaDeviceSynchronize.
 *
 *   grid_sync_cost [SYNCS]     SYNCS grid.syncs a launch (default 4096); a grid the device cannot hold at once is
 *                              named and passed over
 */
#include "../../kernels/runtime/cuda_check.h"
#include "../../kernels/runtime/cuda_track.h"
#include "../../kernels/runtime/launch.h"
#include "track.h"

#include <cooperative_groups.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SYNC_COST_LAUNCHES 7

/* n grid-wide barriers and nothing else; the first thread writes n, so a launch that did not run shows */
__global__ void grid_sync_loop(int n, int *done /* (1) */)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    for (int i = 0; i < n; i++) grid.sync();
    if (grid.thread_rank() == 0) *done = n;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of SYNC_COST_LAUNCHES launches of n syncs, ms; a launch that wrote no n is an error */
static double median_launch_ms(int blocks, int threads, int n, int *done)
{
    double ms[SYNC_COST_LAUNCHES];
    for (int k = 0; k < SYNC_COST_LAUNCHES; k++) {
        CUDA_CHECK(cudaMemset(done, 0xff, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());
        double t0 = now_ms();
        CUDA_CHECK(LAUNCH_COOPERATIVE(grid_sync_loop, blocks, threads, 0)(n, done));
        CUDA_CHECK(cudaDeviceSynchronize());
        ms[k] = now_ms() - t0;
        int got = -1;
        CUDA_CHECK(cudaMemcpy(&got, done, sizeof got, cudaMemcpyDeviceToHost));
        if (got != n) {
            fprintf(stderr, "grid_sync_cost: a launch of %d x %d wrote %d, not %d\n", blocks, threads, got, n);
            exit(1);
        }
    }
    qsort(ms, SYNC_COST_LAUNCHES, sizeof ms[0], by_value);
    return ms[SYNC_COST_LAUNCHES / 2];
}

int main(int argc, char **argv)
{
    int n = 4096;
    if (argc > 2 || (argc == 2 && ((n = atoi(argv[1])) < 1 || n > 1 << 20))) {
        fprintf(stderr, "usage: grid_sync_cost [SYNCS]   (SYNCS from 1 to %d; default 4096)\n", 1 << 20);
        return 2;
    }
    const char *why = NULL;
    if (cuda_device_count(&why) == 0) {
        fprintf(stderr, "grid_sync_cost: no CUDA device (%s)\n", why);
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int sms = prop.multiProcessorCount;
    int *done = (int *)dev_alloc_array(1, DT_I32, "grid_sync_cost: the launch's n (1)"); /* (1) */
    const int grids[][2] = {{128, 512}, {256, 256}, {sms, 256}};
    printf("grid_sync_cost: %s, %d SMs; %d grid.syncs a launch, each time the median of %d launches\n", prop.name,
           sms, n, SYNC_COST_LAUNCHES);
    printf("%-12s %12s %14s %16s\n", "grid", "0 syncs ms", "n syncs ms", "us per grid.sync");
    for (unsigned g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        int blocks = grids[g][0], threads = grids[g][1], per_sm = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sync_loop, threads, 0));
        if (blocks > per_sm * sms) {
            printf("%4d x %-5d  does not fit: %d blocks of %d threads resident at most\n", blocks, threads,
                   per_sm * sms, threads);
            continue;
        }
        median_launch_ms(blocks, threads, n, done); /* warm-up: module load, first launch */
        double empty = median_launch_ms(blocks, threads, 0, done);
        double full = median_launch_ms(blocks, threads, n, done);
        printf("%4d x %-5d %12.3f %14.3f %16.3f\n", blocks, threads, empty, full, (full - empty) * 1e3 / n);
    }
    dev_free(done);
    return 0;
}
