/* cooperative_groups.h - TEST-ONLY shim (first on the emulation build's include path, as mma.h is): the part of
 * NVIDIA's cooperative groups a persistent kernel uses. this_grid().sync() is a barrier across every thread of
 * the grid, valid only in a cooperative launch (cudaLaunchCooperativeKernel: LAUNCH_COOPERATIVE here), which
 * makes every block resident at once (emu_launch.cc); in any other launch it fails, where a GPU would deadlock. */
#ifndef CUDA_EMU_COOPERATIVE_GROUPS_H
#define CUDA_EMU_COOPERATIVE_GROUPS_H

#include "emu_kernel.h"

namespace cooperative_groups {

struct grid_group {
    void sync(const char *file = __builtin_FILE(), int line = __builtin_LINE()) const { ::emu::grid_sync(file, line); }
    unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
    unsigned long long block_rank() const
    {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
};

struct thread_block {
    void sync(const char *file = __builtin_FILE(), int line = __builtin_LINE()) const { ::emu::syncthreads(file, line); }
};

inline grid_group this_grid() { return grid_group(); }
inline thread_block this_thread_block() { return thread_block(); }

} /* namespace cooperative_groups */

#endif
