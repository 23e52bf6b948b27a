/* tma_map.h - the host side of the TMA (kernels/runtime/ptx/hopper_ptx.h's tma_load_2d): a CUtensorMap for a
 * row-major 2-D tensor, made by the driver's cuTensorMapEncodeTiled. The driver function is reached through
 * the runtime (cudaGetDriverEntryPointByVersion, the non-deprecated form of cudaGetDriverEntryPoint), so
 * nothing links libcuda. Each failure prints what was asked and exits(4), as cuda_check.h's calls do.
 * What the driver requires (cuda.h, cuTensorMapEncodeTiled): the global address 16-byte aligned, the row
 * stride a multiple of 16 bytes, each box dimension in [1, 256], the box row a multiple of 16 bytes and, with
 * a swizzle, at most the swizzle's span (128 bytes for CU_TENSOR_MAP_SWIZZLE_128B). CUDA-only (.cu files). */
#ifndef KERNELS_TMA_MAP_H
#define KERNELS_TMA_MAP_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"

/* The map of rows x cols elements of type `type` (elem_bytes each) at base, row stride ld elements, whose TMA
 * box is box_rows x box_cols elements; elements outside the tensor read as zeros. */
static inline CUtensorMap tma_map_2d(const void *base, CUtensorMapDataType type, size_t elem_bytes,
                                     uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                                     uint32_t box_cols, CUtensorMapSwizzle swizzle)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode;
    if (!encode) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                                    &found));
        if (found != cudaDriverEntryPointSuccess || !fn) {
            fprintf(stderr, "cuTensorMapEncodeTiled: not found in the driver (query result %d)\n",
                    (int)found);
            exit(4);
        }
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    CUtensorMap map;
    cuuint64_t dim[2] = {cols, rows}, stride[1] = {ld * elem_bytes};
    cuuint32_t box[2] = {box_cols, box_rows}, step[2] = {1, 1};
    CUresult r = encode(&map, type, 2, (void *)base, dim, stride, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed (CUresult %d): %llu x %llu elements of %zu bytes at "
                "%p, row stride %llu, box %u x %u, swizzle %d\n", (int)r, (unsigned long long)rows,
                (unsigned long long)cols, elem_bytes, base, (unsigned long long)ld, box_rows, box_cols,
                (int)swizzle);
        exit(4);
    }
    return map;
}

#endif
