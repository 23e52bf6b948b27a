/* hd.h - one macro that lets a function compile for both the CPU and the GPU.
 *
 * Each lesson keeps the arithmetic of its CUDA kernels in small functions marked HD. nvcc compiles them as
 * __host__ __device__ (callable from kernels and from host code); gcc sees plain `static inline` C. The CPU
 * implementation calls the very same functions, so the CPU tests exercise the GPU's math on a machine without
 * a GPU.
 */
#ifndef KERNELS_HD_H
#define KERNELS_HD_H

#ifdef __CUDACC__
#define HD __host__ __device__ static inline
#else
#define HD static inline
#endif

/* UNROLL before a loop of constant trip count whose body indexes register arrays (WMMA fragments, per-lane
 * running maxima): nvcc's heuristics may leave such a loop rolled, and the arrays then live in local memory.
 * GCC unrolls it too, so that code compiled by both has the same copies of each line (the emulator's time
 * model compares the two per line); another compiler ignores it. */
#ifdef __CUDACC__
#define UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 128")
#else
#define UNROLL
#endif

#endif
