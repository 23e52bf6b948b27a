/* cublas_v2.h - TEST-ONLY shim: NVIDIA's own cuBLAS declarations; the definitions are cublas_shim.cc, over
 * CBLAS (OpenBLAS). Only the calls this project makes are defined: anything else fails to link. */
#ifndef CUDA_EMU_CUBLAS_V2_H
#define CUDA_EMU_CUBLAS_V2_H
#pragma GCC system_header /* #include_next is a GCC extension: no -Wpedantic note for it */
#include "cuda_runtime.h"
#include_next <cublas_v2.h>
#endif
