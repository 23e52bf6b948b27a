/* cooperative_groups.h - TEST-ONLY shim: the thread-block group of NVIDIA's cooperative groups on the CPU emulator
 * (a .cu file's `#include <cooperative_groups.h>` finds it in the emulation build; nvcc finds NVIDIA's). Only
 * this_thread_block() and its size, rank, indices and sync; other groups do not compile here. */
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
    void sync() const { ::emu::syncthreads("cooperative_groups::thread_block::sync", 0); }
};

inline thread_block this_thread_block(void) { return thread_block(); }

} /* namespace cooperative_groups */

#endif
