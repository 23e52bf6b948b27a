/* gru_launch.h - the cooperative grid lessons 4's persistent versions (kernels/gru_v3.cu to gru_v5.cu) plan
 * their launch with; gru_v3.cu defines it. CUDA sources only. */
#ifndef KERNELS_GRU_LAUNCH_H
#define KERNELS_GRU_LAUNCH_H

#include "gru_problem.h"

/* cuda-v3 to v5's grid (kernels/gru_v3.cu): the largest of at most `most` blocks, up to max_per_sm per SM,
 * whose dynamic shared memory smem_of(d, G) fits a block and whose blocks are all resident at once
 * (cudaLaunchCooperativeKernel's precondition); sets kernel's shared-memory opt-in on the way. why: NULL, or
 * no device, no cooperative launch, or too_big */
typedef struct {
    int blocks;      /* G */
    size_t smem;     /* dynamic shared memory per block */
    const char *why; /* NULL, or why no grid fits */
} gru_coop_plan;
gru_coop_plan gru_plan_cooperative(const void *kernel, int threads, long long most, int max_per_sm,
                                   size_t (*smem_of)(const gru_dims *d, long long G), const gru_dims *d,
                                   const char *too_big);
#endif
