/* cooperative_groups.h - TEST-ONLY shim: the part of NVIDIA's cooperative groups the project's kernels use, on the
 * CPU emulator (a .cu file's `#include <cooperative_groups.h>` finds it in the emulation build; nvcc finds NVIDIA's).
 * this_thread_block(): its size, rank, indices and sync. this_grid().sync(): a barrier across every thread of the
 * grid, valid only in a cooperative launch (cudaLaunchCooperativeKernel: LAUNCH_COOPERATIVE here), which makes every
 * block resident at once (emu_launch.cc); in any other launch it fails, where a GPU would deadlock. Other groups do
 * not compile here. */
#ifndef CUDA_EMU_COOPERATIVE_GROUPS_H
#define CUDA_EMU_COOPERATIVE_GROUPS_H

#include "emu_kernel.h"

namespace cooperative_groups {

class thread_block {
public:
    unsigned long long size() const { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const
    {
        return threadIdx.x + (unsigned long long)blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
    }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 dim_threads() const { return blockDim; }
    void sync(const char *file = __builtin_FILE(), int line = __builtin_LINE()) const { ::emu::syncthreads(file, line); }
};

class grid_group {
public:
    void sync(const char *file = __builtin_FILE(), int line = __builtin_LINE()) const { ::emu::grid_sync(file, line); }
    unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
    unsigned long long block_rank() const
    {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    /* the CUDA Programming Guide's grid_group: the calling thread's rank in [0, num_threads()), blocks in
       block_rank() order and each block's threads in x-fastest order */
    unsigned long long num_threads() const { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long thread_rank() const
    {
        unsigned long long in_block = threadIdx.x + (unsigned long long)blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        return block_rank() * blockDim.x * blockDim.y * blockDim.z + in_block;
    }
};

inline thread_block this_thread_block(void) { return thread_block(); }
inline grid_group this_grid(void) { return grid_group(); }

} /* namespace cooperative_groups */

#endif
